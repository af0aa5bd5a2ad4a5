// Backups and restores of the database (docs/backups.md). SQLite: a consistent copy taken while
// the service writes, with SQLite's online backup API in one step, and a restore that checks the
// copy before it replaces anything. PostgreSQL: pg_dump and pg_restore do it; this file builds
// their command lines, with the password never on them.
import { existsSync, linkSync, mkdirSync, renameSync, rmSync, statSync, chmodSync, copyFileSync } from 'node:fs';
import { basename, dirname, join, resolve } from 'node:path';
import SQLite from 'better-sqlite3';

/** A backup or a restore that cannot be done as asked; its message is the line the user reads. */
export class BackupError extends Error {}

/** `20261127-031500` (UTC): backup names sort by time. */
export function backupStamp(now = new Date()): string {
  return now.toISOString().replace(/[-:]/g, '').replace('T', '-').slice(0, 15);
}

/** The files SQLite keeps beside a database: its write-ahead log and the log's index. */
const SIDE_FILES = ['-wal', '-shm', '-journal'];

function removeWithSideFiles(path: string): void {
  for (const suffix of ['', ...SIDE_FILES]) rmSync(`${path}${suffix}`, { force: true });
}

/** How many rows a table holds; null when the table is missing. */
function count(handle: SQLite.Database, table: string): number | null {
  try {
    return (handle.prepare(`select count(*) as n from ${table}`).get() as { n: number }).n;
  } catch {
    return null;
  }
}

// sqlite3_backup_step copies at most this many pages per step: all of them. A step runs in one
// read transaction, so a commit by the service cannot restart it halfway (the `sqlite3 .backup`
// shell command copies 100 pages a step and starts again after every commit of a busy service).
const ALL_PAGES = 0x7fffffff;

export type SqliteBackup = { path: string; bytes: number; users: number; posts: number };

/**
 * Copies the SQLite database at `source` to `destination`, which must not exist: a snapshot of
 * one moment, taken while the service keeps writing (WAL readers never block the writer). The
 * copy is a single file (rollback journal, no WAL beside it), readable only by its owner (it
 * holds password and token hashes), and checked before it takes its name. `onCopy` is called
 * just before the snapshot is taken: whatever was committed before it is in the copy.
 */
export async function backupSqlite(source: string, destination: string, onCopy: () => void = () => {}): Promise<SqliteBackup> {
  if (!existsSync(source)) throw new BackupError(`There is no SQLite database at ${source} (DATABASE_URL).`);
  if (existsSync(destination)) throw new BackupError(`${destination} already exists: a backup never replaces a file; name another one with --to.`);
  mkdirSync(dirname(destination), { recursive: true, mode: 0o700 });
  // Written under another name and linked into place: a backup cut short (a full disk, a kill)
  // never has the name of a good one, and link() refuses a name taken meanwhile.
  const partial = join(dirname(destination), `.${basename(destination)}.partial-${process.pid}`);
  try {
    const handle = new SQLite(source, { fileMustExist: true });
    try {
      handle.pragma('busy_timeout = 5000');
      onCopy();
      await handle.backup(partial, { progress: () => ALL_PAGES });
    } finally {
      handle.close();
    }
    chmodSync(partial, 0o600);
    const copy = new SQLite(partial, { fileMustExist: true });
    let summary: { users: number; posts: number };
    try {
      copy.pragma('journal_mode = DELETE');
      const check = copy.pragma('quick_check', { simple: true });
      if (check !== 'ok') throw new BackupError(`The copy failed its check (${firstProblem(check)}); ${destination} was not written.`);
      summary = { users: count(copy, 'users') ?? 0, posts: count(copy, 'posts') ?? 0 };
    } finally {
      copy.close();
    }
    try {
      linkSync(partial, destination);
    } catch (error) {
      if ((error as { code?: unknown }).code === 'EEXIST') throw new BackupError(`${destination} already exists: a backup never replaces a file; name another one with --to.`);
      throw error;
    }
    return { path: destination, bytes: statSync(destination).size, ...summary };
  } finally {
    removeWithSideFiles(partial);
  }
}

/** The first problem integrity_check reports (it lists them one a line, after a heading). */
function firstProblem(check: unknown): string {
  const lines = String(check).split('\n').filter((line) => line.trim() !== '' && !line.startsWith('***'));
  return `${lines[0] ?? String(check)}${lines.length > 1 ? `, and ${lines.length - 1} more` : ''}`;
}

export type CopyContents = { users: number; posts: number; migrations: string[]; pending: string[] };

/**
 * Checks that the SQLite file at `path` is a whole Tessera database this build can run: SQLite's
 * integrity check passes, it has Tessera's migration table, and none of its migrations is
 * unknown here (a copy from a newer build would meet code that does not know its tables).
 */
export function inspectSqlite(path: string, label: string, knownMigrations: readonly string[]): CopyContents {
  let handle: SQLite.Database;
  try {
    handle = new SQLite(path, { fileMustExist: true });
  } catch (error) {
    throw new BackupError(`${label} cannot be opened (${(error as Error).message}).`);
  }
  try {
    let check: unknown;
    try {
      check = handle.pragma('integrity_check', { simple: true });
    } catch (error) {
      const code = (error as { code?: unknown }).code;
      if (code === 'SQLITE_NOTADB') throw new BackupError(`${label} is not a SQLite database.`);
      throw new BackupError(`${label} is damaged (${(error as Error).message}).`);
    }
    if (check !== 'ok') throw new BackupError(`${label} is damaged (integrity check: ${firstProblem(check)}).`);
    let migrations: string[];
    try {
      migrations = (handle.prepare('select name from kysely_migration order by name').all() as { name: string }[]).map((row) => row.name);
    } catch {
      migrations = [];
    }
    if (!migrations.includes(knownMigrations[0] ?? '') || count(handle, 'users') === null) {
      throw new BackupError(`${label} is not a Tessera database (it has no Tessera migrations or no users table).`);
    }
    const unknown = migrations.filter((name) => !knownMigrations.includes(name));
    if (unknown.length > 0) {
      throw new BackupError(`${label} comes from a newer Tessera (migration ${unknown[0]} is unknown to this build): restore it with that version or a later one.`);
    }
    return { users: count(handle, 'users') ?? 0, posts: count(handle, 'posts') ?? 0, migrations, pending: knownMigrations.filter((name) => !migrations.includes(name)) };
  } finally {
    handle.close();
  }
}

/**
 * True when another connection has the database open (a running service): it takes SQLite's
 * exclusive lock without waiting, which any open WAL connection, even idle, prevents.
 */
export function sqliteInUse(path: string): boolean {
  if (!existsSync(path)) return false;
  const handle = new SQLite(path, { fileMustExist: true, timeout: 0 });
  try {
    handle.pragma('locking_mode = EXCLUSIVE');
    handle.exec('begin exclusive');
    handle.exec('commit');
    return false;
  } catch (error) {
    if ((error as { code?: unknown }).code === 'SQLITE_BUSY') return true;
    throw error;
  } finally {
    // The last connection to close folds the WAL into the file and deletes it.
    handle.close();
  }
}

export type SqliteRestore = CopyContents & { keptAs: string | null };

/**
 * Puts a checked copy of `from` in place of the database at `target`. Refused while another
 * process has the database open, and over an existing database unless `force`; the database it
 * replaces is kept beside it (`app.db.replaced-<time>`), never deleted.
 */
export function restoreSqlite(from: string, target: string, options: { force: boolean; knownMigrations: readonly string[] }): SqliteRestore {
  const source = resolve(from);
  if (!existsSync(source) || !statSync(source).isFile()) throw new BackupError(`There is no file at ${source}.`);
  if (source === target) throw new BackupError(`${source} is the database DATABASE_URL names: restore from a backup of it.`);
  mkdirSync(dirname(target), { recursive: true });
  // The copy is checked where it will stay (same file system, so the final rename is atomic), and
  // it is the copy that is checked, not the file it came from.
  const incoming = join(dirname(target), `.${basename(target)}.restoring-${process.pid}`);
  try {
    copyFileSync(source, incoming);
    const contents = inspectSqlite(incoming, source, options.knownMigrations);
    const copy = new SQLite(incoming, { fileMustExist: true });
    try {
      copy.pragma('journal_mode = DELETE');
    } finally {
      copy.close();
    }
    let keptAs: string | null = null;
    // The restored file keeps the access of the one it replaces (the service's user may differ
    // from whoever restores); a new one stays readable by its owner alone, as the backup was.
    chmodSync(incoming, existsSync(target) ? statSync(target).mode & 0o777 : 0o600);
    if (existsSync(target)) {
      if (sqliteInUse(target)) {
        throw new BackupError(`The database ${target} is open in another process (is the service running?): stop it, then restore.`);
      }
      if (!options.force) throw new BackupError(`${target} already holds a database: add --force to replace it (it is kept as ${basename(target)}.replaced-<time>).`);
      keptAs = `${target}.replaced-${backupStamp()}`;
      for (const suffix of ['', ...SIDE_FILES]) if (existsSync(`${target}${suffix}`)) renameSync(`${target}${suffix}`, `${keptAs}${suffix}`);
    }
    // A write-ahead log left beside the target would be replayed onto the restored file.
    for (const suffix of SIDE_FILES) rmSync(`${target}${suffix}`, { force: true });
    renameSync(incoming, target);
    return { ...contents, keptAs };
  } finally {
    removeWithSideFiles(incoming);
  }
}

/** A word for a POSIX shell: quoted unless it is plainly safe. */
export function shellWord(word: string): string {
  return /^[A-Za-z0-9_./:@%+=,-]+$/.test(word) ? word : `'${word.replaceAll("'", `'\\''`)}'`;
}

/** DATABASE_URL without its password (pg_dump reads it from PGPASSWORD or ~/.pgpass), and the password. */
export function withoutPassword(databaseUrl: string): { url: string; password: string | null } {
  const parsed = new URL(databaseUrl);
  const password = parsed.password === '' ? null : decodeURIComponent(parsed.password);
  parsed.password = '';
  // node-postgres reads the query as a form ("+" is a space); libpq, behind pg_dump, only
  // decodes %XX: `options=-c+search_path%3Dx` would reach PostgreSQL as "+search_path".
  parsed.search = parsed.search.replaceAll('+', '%20');
  return { url: parsed.toString(), password };
}

/**
 * pg_dump's arguments for a backup of Tessera's schema in the custom format (compressed, read by
 * pg_restore). `schema`: the schema Tessera's tables live in; the whole database when it is public.
 */
export function pgDumpArgs(url: string, file: string, schema: string): string[] {
  return ['--format=custom', '--no-owner', ...(schema === 'public' ? [] : [`--schema=${schema}`]), `--file=${file}`, url];
}

/** pg_restore's arguments: replaces what the dump holds, in one transaction (all or nothing). */
export function pgRestoreArgs(url: string, file: string): string[] {
  return ['--clean', '--if-exists', '--no-owner', '--single-transaction', `--dbname=${url}`, file];
}
