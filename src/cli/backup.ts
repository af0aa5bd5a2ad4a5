// db:backup and db:restore (docs/backups.md). SQLite is copied and checked here (src/db/backup.ts);
// PostgreSQL's own tools do it: db:backup runs pg_dump when it is installed and otherwise prints
// the command, db:restore prints the pg_restore command (replacing a PostgreSQL database is the
// operator's act, with the service stopped).
import { spawn } from 'node:child_process';
import { existsSync, mkdirSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { sql } from 'kysely';
import { backupSqlite, backupStamp, BackupError, pgDumpArgs, pgRestoreArgs, restoreSqlite, shellWord, withoutPassword } from '../db/backup.js';
import { sqliteFile } from '../db/connect.js';
import { migrations } from '../db/migrator.js';
import { APP_KEY_MISMATCH, storedSecretsOpen } from '../modules/two-factor/sealed-secrets.js';
import { CliError, text, usageError, type Command } from './command.js';
import type { Runtime } from './runtime.js';

const megabytes = (bytes: number): string => `${(bytes / 1024 / 1024).toFixed(1)} MB`;
const plural = (n: number, word: string): string => `${n} ${word}${n === 1 ? '' : 's'}`;

/** The line that reminds what a backup is worth without its key. */
const KEEP_THE_KEY =
  'Keep APP_KEY (in development, DATA_DIR/app.key) too, apart from the backups: the two-factor secrets in them open only with it.';

/** --to, or a new timestamped file under DATA_DIR/backups. */
function destination(rt: Runtime, to: string | undefined, extension: string): string {
  if (to !== undefined) {
    if (to === '') throw usageError('--to needs a file name.', 'db:backup');
    return resolve(to);
  }
  return join(rt.config().dataDir, 'backups', `tessera-${backupStamp()}${extension}`);
}

/** Runs a program; resolves with its exit code and what it wrote on stderr, or null when it is not installed. */
function runProgram(program: string, args: string[], env: Record<string, string>): Promise<{ code: number; stderr: string } | null> {
  return new Promise((resolvePromise, reject) => {
    const child = spawn(program, args, { env: { ...process.env, ...env }, stdio: ['ignore', 'ignore', 'pipe'] });
    let stderr = '';
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString('utf8')));
    child.on('error', (error: NodeJS.ErrnoException) => (error.code === 'ENOENT' ? resolvePromise(null) : reject(error)));
    child.on('close', (code) => resolvePromise({ code: code ?? 1, stderr }));
  });
}

/** The schema Tessera's tables live in (the first of the connection's search_path). */
async function currentSchema(rt: Runtime): Promise<string> {
  const row = (await sql<{ name: string }>`select current_schema() as name`.execute(rt.db().kysely)).rows[0];
  return row?.name ?? 'public';
}

async function backupPostgres(rt: Runtime, to: string | undefined): Promise<void> {
  const file = destination(rt, to, '.dump');
  if (existsSync(file)) throw new CliError(`${file} already exists: a backup never replaces a file; name another one with --to.`);
  const { url, password } = withoutPassword(rt.config().databaseUrl);
  const args = pgDumpArgs(url, file, await currentSchema(rt));
  mkdirSync(resolve(file, '..'), { recursive: true, mode: 0o700 });
  // The password goes through the environment: a command line is visible to every user of the machine.
  const result = await runProgram('pg_dump', args, password === null ? {} : { PGPASSWORD: password });
  if (result === null) {
    throw new CliError(
      `pg_dump is not installed (PostgreSQL's client, the server's major version or newer); nothing was backed up. With it, run: pg_dump ${args.map(shellWord).join(' ')}${password === null ? '' : ' (the password from PGPASSWORD or ~/.pgpass)'}`,
    );
  }
  if (result.code !== 0) {
    const reason = (result.stderr.trim().split('\n')[0] ?? '').replace(/^pg_dump: (error: )?/, '');
    throw new CliError(`pg_dump failed: ${reason === '' ? `exit code ${result.code}` : reason}.`);
  }
  rt.out(`Backed up the PostgreSQL database to ${file} (pg_dump, custom format).`);
  rt.out(`Restore it with "npm run cli -- db:restore --from ${shellWord(file)}", which prints the pg_restore command.`);
  rt.out(KEEP_THE_KEY);
}

export const backup: Command = {
  summary: 'Back up the database while the service runs',
  usage: '[--to FILE]',
  description: [
    'SQLite: a consistent copy of the database at one moment, taken while the service keeps',
    'writing, checked, written as a single file readable only by its owner. PostgreSQL: runs',
    'pg_dump (custom format), or prints the command when pg_dump is not installed.',
    'Without --to the file is DATA_DIR/backups/tessera-<UTC time>.db (.dump on PostgreSQL).',
    'An existing file is never replaced. The backup is only half of what a restore needs: keep',
    'APP_KEY (in development, DATA_DIR/app.key) as well, apart from the backups.',
  ],
  options: [{ name: 'to', type: 'string', value: 'FILE', description: 'Where to write the backup (it must not exist)' }],
  positionals: [],
  async run(args, rt) {
    const to = text(args, 'to');
    const config = rt.config();
    if (!config.databaseUrl.startsWith('sqlite:')) return backupPostgres(rt, to);
    const source = sqliteFile(config.databaseUrl);
    if (source === null) throw new CliError('DATABASE_URL names an in-memory SQLite database: there is nothing to back up.');
    const started = performance.now();
    try {
      const file = destination(rt, to, '.db');
      const copy = await backupSqlite(source, file, () => rt.out(`Copying ${source} to ${file} ...`));
      const seconds = ((performance.now() - started) / 1000).toFixed(1);
      rt.out(`Backed up ${source} to ${copy.path} (${megabytes(copy.bytes)}, ${plural(copy.users, 'user')}, ${plural(copy.posts, 'post')}, checked) in ${seconds} s.`);
      rt.out(KEEP_THE_KEY);
    } catch (error) {
      if (error instanceof BackupError) throw new CliError(`Nothing backed up: ${error.message}`);
      throw error;
    }
  },
};

export const restore: Command = {
  summary: 'Restore the database from a backup (service stopped)',
  usage: '--from FILE [--force]',
  description: [
    'SQLite: checks the backup first (SQLite\'s integrity check; a Tessera database; no migration',
    'newer than this build), then puts it in place of the database DATABASE_URL names. The',
    'service must be stopped: a database another process has open is refused. An existing',
    'database is replaced only with --force, and kept beside it as <name>.replaced-<UTC time>.',
    'The next start applies any migration the backup lacks. Start with the APP_KEY the backup',
    'was made with: two-factor secrets open only with it (the start says so when they do not).',
    'PostgreSQL: prints the pg_restore command to run with the service stopped.',
  ],
  options: [
    { name: 'from', type: 'string', value: 'FILE', description: 'The backup to restore' },
    { name: 'force', type: 'boolean', description: 'Replace an existing database (it is kept aside)' },
  ],
  positionals: [],
  async run(args, rt) {
    const from = text(args, 'from');
    if (from === undefined || from === '') throw usageError('Missing --from.', 'db:restore');
    const config = rt.config();
    if (!config.databaseUrl.startsWith('sqlite:')) {
      const { url, password } = withoutPassword(config.databaseUrl);
      rt.out('PostgreSQL is restored by pg_restore. Stop the service, then run:');
      rt.out(`  pg_restore ${pgRestoreArgs(url, resolve(from)).map(shellWord).join(' ')}`);
      if (password !== null) rt.out('(the password from PGPASSWORD or ~/.pgpass). The next start applies any migration the backup lacks.');
      else rt.out('The next start applies any migration the backup lacks.');
      return;
    }
    const target = sqliteFile(config.databaseUrl);
    if (target === null) throw new CliError('DATABASE_URL names an in-memory SQLite database: there is nothing to restore into.');
    let restored;
    try {
      restored = restoreSqlite(from, target, { force: args.values.force === true, knownMigrations: Object.keys(migrations) });
    } catch (error) {
      if (error instanceof BackupError) throw new CliError(`Nothing restored: ${error.message}`);
      throw error;
    }
    const kept = restored.keptAs === null ? '' : `; the database it replaced is kept as ${restored.keptAs}`;
    rt.out(`Restored ${resolve(from)} into ${target} (${plural(restored.users, 'user')}, ${plural(restored.posts, 'post')})${kept}.`);
    if (restored.pending.length > 0) rt.out(`The next start applies ${plural(restored.pending.length, 'migration')} of this build that the backup lacks.`);
    // Said now rather than at the first failed sign-in: the key the CLI runs with is the one the
    // service will run with, unless the operator changes it.
    // A backup older than the two-factor columns has no secrets to open.
    const opens = restored.pending.length > 0 ? await storedSecretsOpen(rt.db(), config.appKey).catch(() => true) : await storedSecretsOpen(rt.db(), config.appKey);
    if (!opens) rt.out(`Warning: ${APP_KEY_MISMATCH}`);
  },
};
