// A backup that restores: the real service (`src/server.ts`) keeps writing (posts and tokens
// created through the API, each acknowledged write recorded by the test) while `db:backup` runs
// as its own process; the backup is restored with `db:restore` into a fresh DATA_DIR and a new
// service starts on it with the same APP_KEY. Every write acknowledged before the backup began
// is there, the old tokens answer, and an account with two-factor sign-in signs in with its code.
// Then the same copy with another APP_KEY: production refuses to start with one line naming
// APP_KEY, development starts with one warning line. SQLite: PostgreSQL is backed up by pg_dump
// (test/cli/backup.test.ts runs it on the PostgreSQL run).
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import SQLite from 'better-sqlite3';
import { APP_KEY_MISMATCH } from '../../src/modules/two-factor/sealed-secrets.js';
import { createServices } from '../../src/services.js';
import { testConfig } from '../helpers.js';
import { spawnCli } from '../cli/harness.js';
import { createSharedDatabase, issueTokenHttp, seedUsers, spawnServer, startServerProcess, type SeededUser, type SharedDatabase } from '../load/server-process.js';
import { freePort } from '../support/browser.js';
import { sqliteOnly } from '../support/services.js';
import { codeAt } from '../support/two-factor-sign-in.js';

const OTHER_APP_KEY = `base64:${Buffer.alloc(32, 9).toString('base64')}`;
/** Rows written before the service starts, so that the copy takes more than an instant. */
const PREFILLED_POSTS = 20_000;
const POST_WRITERS = 4;

type Ack = { kind: 'post' | 'token'; id: number; token?: string; at: number };

const api = (token: string) => ({ authorization: `Bearer ${token}`, accept: 'application/json', 'content-type': 'application/json' });

/** Runs the service until it exits by itself (a refused start); killed after 20 s. */
function startAndWaitForExit(env: Record<string, string>, port: number): Promise<{ code: number | string; output: string }> {
  return new Promise((resolve) => {
    const child = spawnServer(env, port);
    let output = '';
    child.stdout?.on('data', (chunk: Buffer) => (output += chunk.toString('utf8')));
    child.stderr?.on('data', (chunk: Buffer) => (output += chunk.toString('utf8')));
    const timer = setTimeout(() => child.kill('SIGKILL'), 20_000);
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
  const dirs: string[] = [];
  const freshDir = () => {
    const dir = mkdtempSync(join(tmpdir(), 'tessera-restored-'));
    dirs.push(dir);
    return dir;
  };
  const restoreInto = async (dir: string) => {
    const result = await spawnCli(['db:restore', '--from', backupFile], { cwd: dir, env: { DATABASE_URL: `sqlite:${join(dir, 'app.db')}`, DATA_DIR: dir } });
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
  });
  after(async () => {
    await database?.drop();
    for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
  });

  it('holds every write acknowledged before the backup began; old tokens answer and two-factor accounts sign in', async () => {
    const server = await startServerProcess({ DATABASE_URL: database.url, DATA_DIR: database.dataDir });
    const acks: Ack[] = [];
    let backupStarted = Infinity;
    let backupEnded = Infinity;
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
      backupStarted = performance.now();
      const backup = await spawnCli(['db:backup', '--to', backupFile], { cwd: backupDir, env: { DATABASE_URL: database.url, DATA_DIR: database.dataDir } });
      backupEnded = performance.now();
      await new Promise((resolve) => setTimeout(resolve, 300));
      writing = false;
      await Promise.all(writers);
      assert.equal(backup.code, 0, backup.stderr);
      assert.match(backup.stdout, /^Backed up .* to .*nightly\.db \(.*, checked\) in [\d.]+ s\.$/m);

      const before = acks.filter((ack) => ack.at < backupStarted);
      const during = acks.filter((ack) => ack.at >= backupStarted && ack.at <= backupEnded);
      console.log(
        `FIGURES backup-while-writing: prefilled_posts=${PREFILLED_POSTS} acknowledged_before=${before.length} acknowledged_while_backup_ran=${during.length} ` +
          `acknowledged_after=${acks.length - before.length - during.length} backup_process=${((backupEnded - backupStarted) / 1000).toFixed(2)}s (${backup.stdout.split('\n')[0]})`,
      );
      assert.ok(during.length > 0, 'the service kept writing while the backup ran');
      assert.ok(before.some((ack) => ack.kind === 'token') && before.some((ack) => ack.kind === 'post'));

      await server.stop();

      // A fresh directory, as on a new machine; the same APP_KEY (the tests' own).
      const dir = freshDir();
      const url = await restoreInto(dir);
      const restored = new SQLite(join(dir, 'app.db'), { readonly: true });
      const postIds = new Set((restored.prepare('select id from posts').all() as { id: number }[]).map((row) => row.id));
      const tokenIds = new Set((restored.prepare('select id from personal_access_tokens').all() as { id: number }[]).map((row) => row.id));
      restored.close();
      const missing = before.filter((ack) => !(ack.kind === 'post' ? postIds : tokenIds).has(ack.id));
      assert.deepEqual(missing, [], 'every write acknowledged before the backup began is in it');
      assert.ok(postIds.size >= PREFILLED_POSTS + before.filter((ack) => ack.kind === 'post').length);

      const second = await startServerProcess({ DATABASE_URL: url, DATA_DIR: dir });
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
    const url = await restoreInto(dir);
    const refused = await startAndWaitForExit({ NODE_ENV: 'production', APP_KEY: OTHER_APP_KEY, DATABASE_URL: url, DATA_DIR: dir, LOG_LEVEL: 'info' }, await freePort());
    assert.equal(refused.code, 1, refused.output);
    const lines = refused.output.split('\n').filter((line) => line.trim() !== '');
    assert.deepEqual(lines, [APP_KEY_MISMATCH]);
    assert.match(APP_KEY_MISMATCH, /^APP_KEY /);
    // The right key starts in production on the same copy.
    const started = await startServerProcess({ NODE_ENV: 'production', DATABASE_URL: url, DATA_DIR: dir });
    await started.stop();
  });

  it('in development, a restored copy under a new DATA_DIR/app.key starts with one warning line', async () => {
    const dir = freshDir();
    const url = await restoreInto(dir);
    // No APP_KEY: development generates DATA_DIR/app.key, as after copying only the database.
    const server = await startServerProcess({ NODE_ENV: 'development', APP_KEY: '', DATABASE_URL: url, DATA_DIR: dir });
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
