// db:backup and db:restore as an operator runs them (real processes). SQLite: the copy, its
// name and access, and every refusal of a restore (an existing database without --force, a
// database another process has open, a file that is not SQLite, damaged, of another application
// or of a newer build), each changing nothing; the warning when APP_KEY cannot open the restored
// two-factor secrets. PostgreSQL: pg_dump runs (or its command is printed without the password),
// and the pg_restore command db:restore prints brings the data back.
import assert from 'node:assert/strict';
import { execFileSync, spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { copyFileSync, existsSync, mkdtempSync, readFileSync, rmSync, statSync, truncateSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import SQLite from 'better-sqlite3';
import pg from 'pg';
import { TEST_DATABASE_URL } from '../helpers.js';
import { seedUsers, withSearchPath } from '../load/server-process.js';
import { needsPostgres, oncePerRun, sqliteOnly } from '../support/services.js';
import { codeAt } from '../support/two-factor-sign-in.js';
import { createCliHarness, spawnCli, type CliHarness, type CliResult } from './harness.js';

const OTHER_APP_KEY = `base64:${Buffer.alloc(32, 9).toString('base64')}`;

/** A failure is one line on stderr, nothing on stdout, and never a stack trace. */
function assertOneLineError(result: CliResult, code: number, message: RegExp): void {
  assert.equal(result.code, code, `exit code (stdout: ${result.stdout} stderr: ${result.stderr})`);
  assert.equal(result.stdout, '');
  assert.match(result.stderr, message);
  assert.equal(result.stderr.trimEnd().split('\n').length, 1, `one line: ${result.stderr}`);
  assert.doesNotMatch(result.stderr, /\n\s+at /);
}

/** What a SQLite file holds: its users' emails, or null when there is no file. */
function emailsIn(path: string): string[] | null {
  if (!existsSync(path)) return null;
  const db = new SQLite(path, { readonly: true, fileMustExist: true });
  try {
    return (db.prepare('select email from users order by id').all() as { email: string }[]).map((row) => row.email);
  } finally {
    db.close();
  }
}

describe('db:backup and db:restore on SQLite', { skip: sqliteOnly('PostgreSQL is backed up with pg_dump (below)') }, () => {
  let h: CliHarness;
  let emails: string[];
  let backup: string;
  const fresh = (name: string) => ({ DATABASE_URL: `sqlite:${join(h.dir, name, 'app.db')}`, DATA_DIR: join(h.dir, name) });

  before(async () => {
    h = await createCliHarness();
    const users = await seedUsers(h.db, 3);
    emails = users.map((user) => user.email);
    // Two-factor on for one of them, sealed with the tests' APP_KEY.
    const user = await h.services.users.findById(users[0]!.id);
    const setup = await h.services.twoFactor.begin(user!);
    assert.ok(await h.services.twoFactor.confirm((await h.services.users.findById(users[0]!.id))!, await codeAt(setup.secret, -1)));
  });
  after(() => h.close());

  test('writes a checked, single-file copy under DATA_DIR/backups, readable by its owner alone, and names it', async () => {
    const result = await h.cli(['db:backup'], { DATA_DIR: h.dir });
    assert.equal(result.code, 0, result.stderr);
    const match = /^Backed up .* to (\S+\/backups\/tessera-\d{8}-\d{6}\.db) \(.*, 3 users, 0 posts, checked\) in [\d.]+ s\.$/m.exec(result.stdout);
    assert.ok(match, result.stdout);
    backup = match[1]!;
    assert.equal(dirname(backup), join(h.dir, 'backups'));
    assert.match(result.stdout, /Keep APP_KEY .*DATA_DIR\/app\.key/);
    assert.equal(statSync(backup).mode & 0o777, 0o600);
    assert.equal(statSync(dirname(backup)).mode & 0o777, 0o700);
    assert.deepEqual(emailsIn(backup), emails);
    // One file: no write-ahead log to forget beside it.
    assert.equal(existsSync(`${backup}-wal`), false);
    const copy = new SQLite(backup, { readonly: true });
    assert.equal(copy.pragma('journal_mode', { simple: true }), 'delete');
    copy.close();
  });

  test('never replaces an existing file', async () => {
    const taken = join(h.dir, 'taken.db');
    writeFileSync(taken, 'keep me');
    assertOneLineError(await h.cli(['db:backup', '--to', taken]), 1, /^Nothing backed up: .*taken\.db already exists: a backup never replaces a file; name another one with --to\.$/m);
    assert.equal(readFileSync(taken, 'utf8'), 'keep me');
  });

  test('restores into a fresh directory, with the warning-free key it was made with', async () => {
    const env = fresh('restored');
    const result = await h.cli(['db:restore', '--from', backup], env);
    assert.equal(result.code, 0, result.stderr);
    assert.equal(result.stdout, `Restored ${backup} into ${join(env.DATA_DIR, 'app.db')} (3 users, 0 posts).\n`);
    assert.deepEqual(emailsIn(join(env.DATA_DIR, 'app.db')), emails);
  });

  test('says at once when APP_KEY cannot open the restored two-factor secrets', async () => {
    const result = await h.cli(['db:restore', '--from', backup], { ...fresh('other-key'), APP_KEY: OTHER_APP_KEY });
    assert.equal(result.code, 0, result.stderr);
    assert.match(result.stdout, /^Warning: APP_KEY cannot open the two-factor secrets stored in the database: .*DATA_DIR\/app\.key.*$/m);
  });

  test('refuses to replace an existing database without --force; with it, keeps the old one aside', async () => {
    const env = fresh('twice');
    assert.equal((await h.cli(['db:restore', '--from', backup], env)).code, 0);
    const target = join(env.DATA_DIR, 'app.db');
    const db = new SQLite(target);
    db.prepare("update users set email = 'changed@example.com' where id = (select min(id) from users)").run();
    db.close();
    assertOneLineError(await h.cli(['db:restore', '--from', backup], env), 1, /^Nothing restored: .*app\.db already holds a database: add --force to replace it \(it is kept as app\.db\.replaced-<time>\)\.$/m);
    assert.equal(emailsIn(target)?.[0], 'changed@example.com');
    const forced = await h.cli(['db:restore', '--from', backup, '--force'], env);
    assert.equal(forced.code, 0, forced.stderr);
    const kept = /the database it replaced is kept as (\S+\.replaced-\d{8}-\d{6})\.$/m.exec(forced.stdout)?.[1];
    assert.ok(kept, forced.stdout);
    assert.deepEqual(emailsIn(target), emails);
    assert.equal(emailsIn(kept)?.[0], 'changed@example.com');
  });

  test('refuses while another process has the database open (a running service), even with --force', async () => {
    // The harness's own connection holds the database open, as the service would.
    const target = join(h.dir, 'app.db');
    const before = emailsIn(target);
    assertOneLineError(
      await h.cli(['db:restore', '--from', backup, '--force']),
      1,
      /^Nothing restored: The database .*app\.db is open in another process \(is the service running\?\): stop it, then restore\.$/m,
    );
    assert.deepEqual(emailsIn(target), before);
  });

  const refusals: { name: string; make(path: string): void; message: RegExp }[] = [
    { name: 'a file that is not a SQLite database', make: (path) => writeFileSync(path, 'a text file, long enough to have a header of one hundred bytes, '.repeat(4)), message: /is not a SQLite database\.$/ },
    {
      name: 'a damaged copy (cut short)',
      make: (path) => {
        copyFileSync(backup, path);
        truncateSync(path, Math.floor(statSync(path).size / 2));
      },
      message: /is damaged \(.*\)\.$/,
    },
    {
      name: 'a damaged copy (bytes overwritten)',
      make: (path) => {
        copyFileSync(backup, path);
        const bytes = readFileSync(path);
        // Page 2 onward: the header stays readable, the tables do not.
        bytes.fill(0x5a, 4096 + 8, 4096 * 3);
        writeFileSync(path, bytes);
      },
      message: /is damaged \(.*\)\.$/,
    },
    {
      name: 'the database of another application',
      make: (path) => {
        const db = new SQLite(path);
        db.exec('create table users (id integer primary key, login text)');
        db.close();
      },
      message: /is not a Tessera database \(it has no Tessera migrations or no users table\)\.$/,
    },
    {
      name: 'a backup from a newer build',
      make: (path) => {
        copyFileSync(backup, path);
        const db = new SQLite(path);
        db.prepare("insert into kysely_migration (name, timestamp) values ('2099_01_01_000001_from_the_future', '2099-01-01T00:00:00.000Z')").run();
        db.close();
      },
      message: /comes from a newer Tessera \(migration 2099_01_01_000001_from_the_future is unknown to this build\): restore it with that version or a later one\.$/,
    },
  ];
  for (const refusal of refusals) {
    test(`refuses ${refusal.name} and changes nothing`, async () => {
      const file = join(h.dir, `bad-${randomBytes(4).toString('hex')}.db`);
      refusal.make(file);
      const env = fresh(`bad-${randomBytes(4).toString('hex')}`);
      assertOneLineError(await h.cli(['db:restore', '--from', file], env), 1, new RegExp(`^Nothing restored: ${file.replaceAll('.', '\\.')} ${refusal.message.source}`, 'm'));
      // Nothing at the target, not even a half-copied file.
      assert.deepEqual(spawnSync('ls', ['-A', env.DATA_DIR]).stdout.toString().split('\n').filter((name) => name.endsWith('.db') || name.includes('restoring')), []);
      // With --force over an existing database, too: it stays as it was.
      assertOneLineError(await h.cli(['db:restore', '--from', file, '--force'], fresh('restored')), 1, /^Nothing restored: /m);
      assert.deepEqual(emailsIn(join(h.dir, 'restored', 'app.db')), emails);
    });
  }

  test('refuses a file that does not exist, and an in-memory database', async () => {
    assertOneLineError(await h.cli(['db:restore', '--from', join(h.dir, 'nowhere.db')], fresh('none')), 1, /^Nothing restored: There is no file at .*nowhere\.db\.$/m);
    assertOneLineError(await h.cli(['db:backup'], { DATABASE_URL: 'sqlite::memory:' }), 1, /^DATABASE_URL names an in-memory SQLite database: there is nothing to back up\.$/m);
    assertOneLineError(await h.cli(['db:backup'], { ...fresh('empty') }), 1, /^Nothing backed up: There is no SQLite database at .*empty\/app\.db \(DATABASE_URL\)\.$/m);
  });
});

describe('db:backup and db:restore: help and usage errors', { skip: oncePerRun('the help text') }, () => {
  let dir: string;
  before(() => (dir = mkdtempSync(join(tmpdir(), 'tessera-cli-backup-'))));
  after(() => rmSync(dir, { recursive: true, force: true }));

  test('the command list names both; each --help shows its usage and options', async () => {
    const list = await spawnCli(['--help'], { cwd: dir });
    assert.match(list.stdout, /^ {2}db:backup +Back up the database while the service runs$/m);
    assert.match(list.stdout, /^ {2}db:restore +Restore the database from a backup \(service stopped\)$/m);
    const backupHelp = await spawnCli(['db:backup', '--help'], { cwd: dir });
    assert.equal(backupHelp.code, 0);
    assert.match(backupHelp.stdout, /^Usage: npm run cli -- db:backup \[--to FILE\]$/m);
    assert.match(backupHelp.stdout, /--to FILE +Where to write the backup \(it must not exist\)/);
    const restoreHelp = await spawnCli(['db:restore', '--help'], { cwd: dir });
    assert.equal(restoreHelp.code, 0);
    assert.match(restoreHelp.stdout, /^Usage: npm run cli -- db:restore --from FILE \[--force\]$/m);
    assert.match(restoreHelp.stdout, /--force +Replace an existing database \(it is kept aside\)/);
  });

  test('db:restore without --from, and db:backup with an empty --to, are usage errors (exit 2)', async () => {
    assertOneLineError(await spawnCli(['db:restore'], { cwd: dir }), 2, /^Missing --from\. Run "npm run cli -- db:restore --help"\.$/m);
    assertOneLineError(await spawnCli(['db:backup', '--to', ''], { cwd: dir, env: { DATABASE_URL: `sqlite:${join(dir, 'x.db')}` } }), 2, /^--to needs a file name\. Run "npm run cli -- db:backup --help"\.$/m);
    assertOneLineError(await spawnCli(['db:restore', '--from'], { cwd: dir }), 2, /^Option --from of db:restore needs a value\./m);
  });
});

describe('db:backup and db:restore on PostgreSQL', { skip: needsPostgres }, () => {
  let schema: string;
  let url: string;
  let dir: string;
  const admin = () => new pg.Client({ connectionString: TEST_DATABASE_URL });

  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'tessera-cli-pgdump-'));
    schema = `bk_${randomBytes(6).toString('hex')}`;
    const client = admin();
    await client.connect();
    await client.query(`create schema ${schema}`);
    await client.end();
    url = withSearchPath(TEST_DATABASE_URL, schema);
    assert.equal((await spawnCli(['db:migrate'], { cwd: dir, env: { DATABASE_URL: url } })).code, 0);
    const client2 = admin();
    await client2.connect();
    await client2.query(`insert into ${schema}.users (name, email, password, is_admin, created_at, updated_at) values ('Kept', 'kept@example.com', 'x', 0, now(), now())`);
    await client2.end();
  });
  after(async () => {
    const client = admin();
    await client.connect();
    await client.query(`drop schema if exists ${schema} cascade`);
    await client.end();
    rmSync(dir, { recursive: true, force: true });
  });

  test('db:backup runs pg_dump on the service\'s schema; the pg_restore command db:restore prints brings the rows back', async () => {
    const result = await spawnCli(['db:backup'], { cwd: dir, env: { DATABASE_URL: url, DATA_DIR: dir } });
    assert.equal(result.code, 0, result.stderr);
    const file = /^Backed up the PostgreSQL database to (\S+\/backups\/tessera-\d{8}-\d{6}\.dump) \(pg_dump, custom format\)\.$/m.exec(result.stdout)?.[1];
    assert.ok(file, result.stdout);
    assert.match(execFileSync('pg_restore', ['--list', file]).toString(), new RegExp(`TABLE ${schema} users`));
    // A second backup to the same file is refused.
    assertOneLineError(await spawnCli(['db:backup', '--to', file], { cwd: dir, env: { DATABASE_URL: url } }), 1, /already exists: a backup never replaces a file/);

    const client = admin();
    await client.connect();
    try {
      // The schema's triggers name their tables without it.
      await client.query(`set search_path to ${schema}`);
      await client.query('delete from users');
      const printed = await spawnCli(['db:restore', '--from', file], { cwd: dir, env: { DATABASE_URL: url } });
      assert.equal(printed.code, 0, printed.stderr);
      const command = /^ {2}(pg_restore .*)$/m.exec(printed.stdout)?.[1];
      assert.ok(command, printed.stdout);
      execFileSync('sh', ['-c', command], { stdio: 'pipe' });
      const rows = await client.query(`select email from ${schema}.users`);
      assert.deepEqual(rows.rows, [{ email: 'kept@example.com' }]);
    } finally {
      await client.end();
    }
  });

  test('without pg_dump installed, prints the command to run, never the password, and exits 1', async () => {
    const withPassword = new URL(url);
    withPassword.password = 'hunter2-secret';
    // PATH with node alone: no pg_dump.
    const result = await spawnCli(['db:backup', '--to', join(dir, 'none.dump')], { cwd: dir, env: { DATABASE_URL: withPassword.toString(), PATH: dirname(process.execPath) } });
    assert.equal(result.code, 1, result.stderr);
    assert.match(result.stderr, new RegExp(`^pg_dump is not installed .*nothing was backed up\\. With it, run: pg_dump --format=custom --no-owner --schema=${schema} --file=\\S+none\\.dump 'postgres://postgres@.*' \\(the password from PGPASSWORD or ~/\\.pgpass\\)$`, 'm'));
    assert.doesNotMatch(result.stderr + result.stdout, /hunter2/);
    assert.equal(existsSync(join(dir, 'none.dump')), false);
  });
});
