// A backup that restores: the real service (`src/server.ts`) keeps writing (posts and tokens
// created through the API, each acknowledged write recorded by the test) while `db:backup` runs
// as its own process; the backup is restored with `db:restore` into a fresh DATA_DIR and a new
// service starts on it with the same APP_KEY. Every write acknowledged before the backup began
// is there, the old tokens answer, and an account with two-factor sign-in signs in with its code.
// Then the same copy with another APP_KEY: production refuses to start with one line naming
// APP_KEY, development starts with one warning line. SQLite: PostgreSQL is backed up by pg_dump
// (test/cli/backup.test.ts runs it on the PostgreSQL run).
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import SQLite from 'better-sqlite3';
import { backupSqlite } from '../../src/db/backup.js';
import { APP_KEY_MISMATCH } from '../../src/modules/two-factor/sealed-secrets.js';
import { createServices } from '../../src/services.js';
import { TEST_APP_KEY, testConfig } from '../helpers.js';
import { CLI_NODE_ARGS, CLI_PATH, spawnCli } from '../cli/harness.js';
import { COMPILE_CACHE } from '../support/entry.js';
import { createSharedDatabase, issueTokenHttp, seedUsers, spawnServer, startServerProcess, type SeededUser, type SharedDatabase } from '../load/server-process.js';
import { freePort } from '../support/browser.js';
import { sqliteOnly } from '../support/services.js';
import { codeAt } from '../support/two-factor-sign-in.js';

const OTHER_APP_KEY = `base64:${Buffer.alloc(32, 9).toString('base64')}`;
/** Rows written before the service starts, so that the copy takes more than an instant. */
const PREFILLED_POSTS = 20_000;
const POST_WRITERS = 4;
/** How long a start may take: tsx compiles the service at each start, slow on a busy machine (not a speed test). */
const START_WAIT_MS = 60_000;

type Ack = { kind: 'post' | 'token'; id: number; token?: string; at: number };

const api = (token: string) => ({ authorization: `Bearer ${token}`, accept: 'application/json', 'content-type': 'application/json' });

/**
 * Runs `db:backup` as its own process, and notes the moment it says the copy begins (its
 * "Copying" line): every write acknowledged before that moment must be in the copy.
 */
function runBackup(args: string[], env: Record<string, string>, cwd: string): Promise<{ code: number; stdout: string; stderr: string; copyingAt: number }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [...CLI_NODE_ARGS, CLI_PATH, ...args], {
      cwd,
      env: { PATH: process.env.PATH ?? '', ...COMPILE_CACHE, NODE_ENV: 'test', APP_KEY: TEST_APP_KEY, ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    let copyingAt = Infinity;
    child.stdout.on('data', (chunk: Buffer) => {
      stdout += chunk.toString('utf8');
      if (copyingAt === Infinity && stdout.includes('Copying ')) copyingAt = performance.now();
    });
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString('utf8')));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code: code ?? -1, stdout, stderr, copyingAt }));
  });
}

/** Runs the service until it exits by itself (a refused start); killed after START_WAIT_MS. */
function startAndWaitForExit(env: Record<string, string>, port: number): Promise<{ code: number | string; output: string }> {
  return new Promise((resolve) => {
    const child = spawnServer(env, port);
    let output = '';
    child.stdout?.on('data', (chunk: Buffer) => (output += chunk.toString('utf8')));
    child.stderr?.on('data', (chunk: Buffer) => (output += chunk.toString('utf8')));
    const timer = setTimeout(() => child.kill('SIGKILL'), START_WAIT_MS);
    child.on('exit', (code, signal) => {
      clearTimeout(timer);
      resolve({ code: code ?? signal ?? 'unknown', output });
    });
  });
}

describe('a backup taken while the service writes, restored into a fresh DATA_DIR', { skip: sqliteOnly('PostgreSQL is backed up by pg_dump, tested in test/cli/backup.test.ts') }, () => {
  let database: SharedDatabase;
  let admin: SeededUser;
  let twoFactorUser: SeededUser;
  let twoFactorSecret: string;
  let backupFile: string;
  /** A copy of the seeded database (two-factor on for one account), for the APP_KEY cases. */
  let seededCopy: string;
  const dirs: string[] = [];
  const freshDir = () => {
    const dir = mkdtempSync(join(tmpdir(), 'tessera-restored-'));
    dirs.push(dir);
    return dir;
  };
  const restoreInto = async (dir: string, from: string) => {
    const result = await spawnCli(['db:restore', '--from', from], { cwd: dir, env: { DATABASE_URL: `sqlite:${join(dir, 'app.db')}`, DATA_DIR: dir } });
    assert.equal(result.code, 0, result.stderr);
    return `sqlite:${join(dir, 'app.db')}`;
  };

  before(async () => {
    database = await createSharedDatabase('sqlite');
    [admin, twoFactorUser] = (await seedUsers(database.db, 2)) as [SeededUser, SeededUser];
    await database.db.kysely.updateTable('users').set({ is_admin: 1 }).where('id', '=', admin.id).execute();
    const services = createServices(database.db, testConfig());
    const setup = await services.twoFactor.begin((await services.users.findById(twoFactorUser.id))!);
    assert.ok(await services.twoFactor.confirm((await services.users.findById(twoFactorUser.id))!, await codeAt(setup.secret, -1)));
    twoFactorSecret = setup.secret;
    const sqlite = database.db.sqlite!;
    const insert = sqlite.prepare("insert into posts (author_id, title, slug, excerpt, body, locale, status, created_at, updated_at) values (?, ?, ?, '', ?, 'en', 'draft', ?, ?)");
    const now = new Date().toISOString();
    sqlite.transaction(() => {
      for (let i = 0; i < PREFILLED_POSTS; i += 1) insert.run(admin.id, `Prefilled ${i}`, `prefilled-${i}`, 'Lorem ipsum dolor sit amet. '.repeat(20), now, now);
    })();
    seededCopy = join(freshDir(), 'seeded.db');
    await backupSqlite(join(database.dataDir, 'app.db'), seededCopy);
  });
  after(async () => {
    await database?.drop();
    for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
  });

  it('holds every write acknowledged before the copy began; old tokens answer and two-factor accounts sign in', async () => {
    const server = await startServerProcess({ DATABASE_URL: database.url, DATA_DIR: database.dataDir }, { waitMs: START_WAIT_MS });
    const acks: Ack[] = [];
    try {
      const oldToken = await issueTokenHttp(server.url, admin.email, admin.password, 'before-everything');
      let writing = true;
      const postWriter = async (writer: number) => {
        for (let n = 0; writing; n += 1) {
          const response = await fetch(`${server.url}/api/posts`, { method: 'POST', headers: api(oldToken), body: JSON.stringify({ title: `Written ${writer}-${n}` }) });
          const body = (await response.json()) as { data?: { id: number } };
          assert.equal(response.status, 201, JSON.stringify(body));
          acks.push({ kind: 'post', id: body.data!.id, at: performance.now() });
        }
      };
      const tokenWriter = async () => {
        for (let n = 0; writing; n += 1) {
          const token = await issueTokenHttp(server.url, admin.email, admin.password, `during-${n}`);
          acks.push({ kind: 'token', id: Number(token.split('|')[0]), token, at: performance.now() });
        }
      };
      const writers = [...Array.from({ length: POST_WRITERS }, (_, i) => postWriter(i)), tokenWriter()];
      await new Promise((resolve) => setTimeout(resolve, 500));

      const backupDir = freshDir();
      backupFile = join(backupDir, 'nightly.db');
      const backupStarted = performance.now();
      const backup = await runBackup(['db:backup', '--to', backupFile], { DATABASE_URL: database.url, DATA_DIR: database.dataDir }, backupDir);
      const backupEnded = performance.now();
      await new Promise((resolve) => setTimeout(resolve, 300));
      writing = false;
      await Promise.all(writers);
      assert.equal(backup.code, 0, backup.stderr);
      assert.match(backup.stdout, /^Backed up .* to .*nightly\.db \(.*, checked\) in [\d.]+ s\.$/m);

      // Acknowledged before the copy began: committed before its snapshot, so in it. (Before the
      // command started would be a weaker test: the service checkpoints its WAL into the file
      // while the command starts, and a plain copy of the file would pass it.)
      const before = acks.filter((ack) => ack.at < backup.copyingAt);
      const during = acks.filter((ack) => ack.at >= backup.copyingAt && ack.at <= backupEnded);
      console.log(
        `FIGURES backup-while-writing: prefilled_posts=${PREFILLED_POSTS} acknowledged_before_the_copy=${before.length} acknowledged_from_the_copy_to_the_command_end=${during.length} ` +
          `acknowledged_after=${acks.filter((ack) => ack.at > backupEnded).length} command=${((backupEnded - backupStarted) / 1000).toFixed(2)}s (${backup.stdout.split('\n')[1]})`,
      );
      assert.ok(during.length > 0, 'the service kept writing while the backup ran');
      assert.ok(before.some((ack) => ack.kind === 'token') && before.some((ack) => ack.kind === 'post'));

      await server.stop();

      // A fresh directory, as on a new machine; the same APP_KEY (the tests' own).
      const dir = freshDir();
      const url = await restoreInto(dir, backupFile);
      const restored = new SQLite(join(dir, 'app.db'), { readonly: true });
      const postIds = new Set((restored.prepare('select id from posts').all() as { id: number }[]).map((row) => row.id));
      const tokenIds = new Set((restored.prepare('select id from personal_access_tokens').all() as { id: number }[]).map((row) => row.id));
      restored.close();
      const missing = before.filter((ack) => !(ack.kind === 'post' ? postIds : tokenIds).has(ack.id));
      assert.deepEqual(missing, [], 'every write acknowledged before the copy began is in it');
      assert.ok(postIds.size >= PREFILLED_POSTS + before.filter((ack) => ack.kind === 'post').length);

      const second = await startServerProcess({ DATABASE_URL: url, DATA_DIR: dir }, { waitMs: START_WAIT_MS });
      try {
        for (const token of [oldToken, ...before.flatMap((ack) => (ack.token === undefined ? [] : [ack.token]))]) {
          const response = await fetch(`${second.url}/api/user`, { headers: api(token) });
          assert.equal(response.status, 200, `a token issued before the backup answers: ${await response.text()}`);
        }
        const signIn = await fetch(`${second.url}/api/tokens`, {
          method: 'POST',
          headers: { 'content-type': 'application/json', accept: 'application/json' },
          body: JSON.stringify({ email: twoFactorUser.email, password: twoFactorUser.password, device_name: 'after-restore', code: await codeAt(twoFactorSecret) }),
        });
        assert.equal(signIn.status, 200, `the two-factor account signs in with its code: ${await signIn.text()}`);
        assert.equal(second.output().includes('APP_KEY'), false, 'no warning with the right key');
      } finally {
        await second.stop();
      }
    } finally {
      await server.stop();
    }
  });

  it('in production, a restored copy with another APP_KEY does not start: one line naming APP_KEY', async () => {
    const dir = freshDir();
    const url = await restoreInto(dir, seededCopy);
    const refused = await startAndWaitForExit({ NODE_ENV: 'production', APP_KEY: OTHER_APP_KEY, DATABASE_URL: url, DATA_DIR: dir, LOG_LEVEL: 'info' }, await freePort());
    assert.equal(refused.code, 1, refused.output);
    const lines = refused.output.split('\n').filter((line) => line.trim() !== '');
    assert.deepEqual(lines, [APP_KEY_MISMATCH]);
    assert.match(APP_KEY_MISMATCH, /^APP_KEY /);
    // The right key starts in production on the same copy.
    const started = await startServerProcess({ NODE_ENV: 'production', DATABASE_URL: url, DATA_DIR: dir }, { waitMs: START_WAIT_MS });
    await started.stop();
  });

  it('in development, a restored copy under a new DATA_DIR/app.key starts with one warning line', async () => {
    const dir = freshDir();
    const url = await restoreInto(dir, seededCopy);
    // No APP_KEY: development generates DATA_DIR/app.key, as after copying only the database.
    const server = await startServerProcess({ NODE_ENV: 'development', APP_KEY: '', DATABASE_URL: url, DATA_DIR: dir }, { waitMs: START_WAIT_MS });
    try {
      const warnings = server
        .output()
        .split('\n')
        .filter((line) => line.includes('APP_KEY'))
        .map((line) => JSON.parse(line) as { level: number; msg: string });
      assert.deepEqual(warnings, [{ ...warnings[0], level: 40, msg: APP_KEY_MISMATCH }]);
    } finally {
      await server.stop();
    }
  });
});
