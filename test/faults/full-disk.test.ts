// A full disk under the SQLite file (issue 25 §3, §4): a tmpfs of the test's own, filled to the
// last byte and freed by deleting the filler. Writes answer 503 with Retry-After and a clear
// message, on pages and under /api; reads with a valid token, a session or a remember-me cookie
// still answer, their bookkeeping writes logged and dropped; GET /up says the database cannot be
// written; a start says the disk is full; nothing committed is lost, and the service writes again
// once space is freed, without a restart. SQLite only: PostgreSQL's disk is the server's, not
// ours to fill (its 53100 is mapped the same way, test/unit/write-probe.test.ts).
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { join } from 'node:path';
import { sql } from 'kysely';
import { buildApp } from '../../src/app.js';
import { connect } from '../../src/db/connect.js';
import { migrateToLatest } from '../../src/db/migrator.js';
import { SESSION_COOKIE } from '../../src/plugins/session.js';
import { UNWRITABLE_MESSAGE } from '../../src/plugins/errors.js';
import { createUser, issueToken, testConfig } from '../helpers.js';
import { spawnServer } from '../load/server-process.js';
import { freePort } from '../support/browser.js';
import { WebClient } from '../support/client.js';
import { appOnSmallDisk, assertSaysNothingInside, eventually, type FullDiskApp } from '../support/outage-app.js';
import { sqliteOnly } from '../support/services.js';
import { mountTmpfs, skipWithoutTmpfs, type Tmpfs } from '../support/tmpfs.js';
import { login, mainOf } from '../web/support.js';

const skip = sqliteOnly('a full disk under the SQLite file') || skipWithoutTmpfs();

// The start runs its own server process beside the in-process app: the two share nothing.
describe('a full disk', { skip, concurrency: 2 }, () => {
  describe('under the SQLite database of a running service', () => {
    let t: FullDiskApp;
    let user: Awaited<ReturnType<typeof createUser>>;
    let token: string;
    let signedIn: WebClient;
    let remembered: WebClient;
    /** Tokens issued (200) before and during the full disk: each is a committed row. */
    const acknowledged: number[] = [];
    const rejections: unknown[] = [];
    const unused = new Map<string, string>();
    const idOf = (plaintext: string) => Number(plaintext.split('|')[0]);
    const onRejection = (reason: unknown) => void rejections.push(reason);

    const bearer = (plaintext: string) => ({ authorization: `Bearer ${plaintext}`, accept: 'application/json' });
    const issue = (device: string) =>
      t.app.inject({ method: 'POST', url: '/api/tokens', payload: { email: user.email, password: user.plainPassword, device_name: device } });
    const up = async () => {
      const response = await t.app.inject({ method: 'GET', url: '/up' });
      return { status: response.statusCode, body: response.json() as Record<string, unknown> };
    };

    before(async () => {
      process.on('unhandledRejection', onRejection);
      t = await appOnSmallDisk();
      user = await createUser(t.app, { name: 'Ada' });
      token = await issueToken(t.app, user.email, user.plainPassword);
      signedIn = new WebClient(t.app);
      await login(signedIn, user.email, user.plainPassword);
      await signedIn.get('/profile');
      // A page view moves the session's idle end only once a minute: this one's is an hour old, due.
      await t.db.kysely.updateTable('sessions').set({ expires_at: new Date(Date.now() + 60 * 60_000).toISOString() }).execute();
      remembered = new WebClient(t.app);
      await login(remembered, user.email, user.plainPassword, { remember: '1' });
      remembered.cookies.delete(SESSION_COOKIE);
      for (let i = 0; i < 20; i += 1) {
        const response = await issue(`before-${i}`);
        assert.equal(response.statusCode, 200);
        acknowledged.push(Number((response.json() as { token: string }).token.split('|')[0]));
      }
      // Tokens never used, for the reads on the full disk: each first use is due to write its last use.
      for (const name of ['read-user', 'read-posts']) unused.set(name, (await t.app.services.tokens.issue(user.id, name)).plaintext);
      assert.deepEqual(await up(), { status: 200, body: { status: 'ok', database: true, rate_limit_store: { kind: 'memory', ok: true } } });
    });
    after(async () => {
      process.removeListener('unhandledRejection', onRejection);
      await t?.close();
    });

    it('answers a write with 503, Retry-After and a clear message, under /api and on pages, and changes nothing', async () => {
      t.disk.fill();
      const api = await t.app.inject({ method: 'PUT', url: '/api/user', headers: bearer(token), payload: { name: 'Full' } });
      assert.equal(api.statusCode, 503, api.body);
      assert.equal(api.headers['retry-after'], '60');
      assert.deepEqual(api.json(), { message: UNWRITABLE_MESSAGE, errors: {} });
      const french = await t.app.inject({ method: 'PUT', url: '/api/user', headers: { ...bearer(token), 'accept-language': 'fr' }, payload: { name: 'Full' } });
      assert.equal(french.statusCode, 503);
      assert.match((french.json() as { message: string }).message, /^Le service ne peut pas enregistrer/);

      const page = await signedIn.post('/profile', { name: 'Full', email: user.email });
      assert.equal(page.statusCode, 503, page.body.slice(0, 300));
      assert.equal(page.headers['retry-after'], '60');
      assert.match(String(page.headers['content-type']), /^text\/html/);
      assert.ok(mainOf(page.body).includes(UNWRITABLE_MESSAGE), mainOf(page.body));
      // A write in a transaction of its own (BEGIN IMMEDIATE … COMMIT): SQLite rolls it back
      // itself when the disk is full, and the answer is still the 503, not the failed ROLLBACK's 500.
      const guest = new WebClient(t.app);
      t.disk.free();
      await guest.get('/register');
      t.disk.fill();
      const registration = await guest.post('/register', { name: 'Grace', email: 'grace@example.com', password: 'a long passphrase 1', password_confirmation: 'a long passphrase 1' });
      assert.equal(registration.statusCode, 503, registration.body.slice(0, 300));
      assert.ok(mainOf(registration.body).includes(UNWRITABLE_MESSAGE), mainOf(registration.body));
      for (const answer of [api, page, registration]) assertSaysNothingInside('a write on a full disk', answer);

      const row = await t.db.kysely.selectFrom('users').select('name').where('id', '=', user.id).executeTakeFirstOrThrow();
      assert.equal(row.name, 'Ada');
      assert.equal(await t.db.kysely.selectFrom('users').select('id').where('email', '=', 'grace@example.com').executeTakeFirst(), undefined);
    });

    it('serves reads with a valid token, a session or a remember-me cookie: their bookkeeping writes are logged and dropped', async () => {
      const first = unused.get('read-user')!;
      const second = unused.get('read-posts')!;
      const me = await t.app.inject({ method: 'GET', url: '/api/user', headers: bearer(first) });
      assert.equal(me.statusCode, 200, me.body);
      const posts = await t.app.inject({ method: 'GET', url: '/api/posts', headers: bearer(second) });
      assert.equal(posts.statusCode, 200, posts.body);
      const lastUsed = await t.db.kysely.selectFrom('personal_access_tokens').select('last_used_at').where('id', 'in', [idOf(first), idOf(second)]).execute();
      assert.deepEqual(lastUsed, [{ last_used_at: null }, { last_used_at: null }], 'the last use was not written, and the read answered');

      // A signed-in page view saves the session's idle time: dropped, the page answers.
      const dashboard = await signedIn.get('/dashboard');
      assert.equal(dashboard.statusCode, 200, dashboard.body.slice(0, 300));
      // A remembered visitor: the cookie cannot be swapped, so the page is read as a guest's.
      const home = await remembered.get('/');
      assert.equal(home.statusCode, 200, home.body.slice(0, 300));
      assert.match(home.body, /href="\/login"/);
      // A sign-in's device, noticed after the answer: dropped, never a rejection.
      t.app.services.newDevices.notice(user, { fingerprint: 'full-disk-device', ip: '192.0.2.7', device: null, channel: 'site', locale: 'en' });
      await t.app.services.mail.settled();

      const dropped = new Set(t.log().filter((line) => line.msg === 'bookkeeping write failed').map((line) => line.what));
      assert.deepEqual([...dropped].sort(), ['device seen', 'remember-me use', 'session idle time', 'token last use']);
      assert.deepEqual(rejections, []);
    });

    it('says on GET /up that the database answers but cannot be written (200 degraded), from a probe, not per request', async () => {
      // A second instance on the same file that has seen no failed request: only its probe can tell.
      const db = connect(t.url);
      const other = await buildApp(testConfig({ DATABASE_URL: t.url, DATA_DIR: join(t.disk.dir, 'none'), LOG_LEVEL: 'silent' }), { db });
      try {
        const health = await other.inject({ method: 'GET', url: '/up' });
        assert.equal(health.statusCode, 200);
        assert.deepEqual(health.json(), { status: 'degraded', database: true, database_writable: false, rate_limit_store: { kind: 'memory', ok: true } });
      } finally {
        await other.close();
        await db.close();
      }
      assert.deepEqual(await up(), { status: 200, body: { status: 'degraded', database: true, database_writable: false, rate_limit_store: { kind: 'memory', ok: true } } });
    });

    it('loses nothing committed, and writes again once space is freed, without a restart', async () => {
      // Writes tried on the full disk: each is refused whole, or acknowledged and kept.
      for (let i = 0; i < 10; i += 1) {
        const response = await issue(`during-${i}`);
        assert.ok(response.statusCode === 503 || response.statusCode === 200, `${response.statusCode} ${response.body}`);
        if (response.statusCode === 200) acknowledged.push(Number((response.json() as { token: string }).token.split('|')[0]));
      }
      t.disk.free();
      await eventually('GET /up is ok again', async () => (await up()).body.status === 'ok');
      const write = await t.app.inject({ method: 'PUT', url: '/api/user', headers: bearer(token), payload: { name: 'After' } });
      assert.equal(write.statusCode, 200, write.body);
      const again = await issue('after');
      assert.equal(again.statusCode, 200);
      acknowledged.push(Number((again.json() as { token: string }).token.split('|')[0]));

      // Read through a connection of its own: what any other process finds in the file.
      const reader = connect(t.url);
      try {
        const check = await sql<{ integrity_check: string }>`pragma integrity_check`.execute(reader.kysely);
        assert.deepEqual(check.rows, [{ integrity_check: 'ok' }]);
        const stored = await reader.kysely.selectFrom('personal_access_tokens').select('id').where('id', 'in', acknowledged).execute();
        assert.equal(stored.length, acknowledged.length, 'every acknowledged token is stored');
        const name = await reader.kysely.selectFrom('users').select('name').where('id', '=', user.id).executeTakeFirstOrThrow();
        assert.equal(name.name, 'After');
      } finally {
        await reader.close();
      }
      // The outage is over: said once.
      await eventually('the recovery is logged', () => t.log().some((line) => line.msg === 'database recovered'));
      assert.equal(t.log().filter((line) => line.msg === 'database recovered').length, 1);
      assert.deepEqual(rejections, []);
    });

  });

  describe('at the start', () => {
    let disk: Tmpfs;
    before(async () => {
      disk = mountTmpfs(2);
      const db = connect(`sqlite:${join(disk.dir, 'app.db')}`);
      await migrateToLatest(db);
      await db.close();
      disk.fill();
    });
    after(() => disk?.unmount());

    it('names the full disk in one line, and exits 1 without a stack', async () => {
      const path = join(disk.dir, 'app.db');
      const child = spawnServer({ DATABASE_URL: `sqlite:${path}`, DATA_DIR: join(disk.dir, 'data'), LOG_LEVEL: 'info' }, await freePort());
      let output = '';
      child.stdout?.on('data', (chunk: Buffer) => (output += chunk.toString('utf8')));
      child.stderr?.on('data', (chunk: Buffer) => (output += chunk.toString('utf8')));
      const timer = setTimeout(() => child.kill('SIGKILL'), 20_000);
      const code = await new Promise<number | string>((resolve) => child.once('exit', (exit, signal) => resolve(exit ?? signal ?? 'unknown')));
      clearTimeout(timer);
      const lines = output.split('\n').filter((line) => line.trim() !== '');
      assert.deepEqual(lines, [`DATABASE_URL: the disk holding the SQLite database ${path} is full (no space left on device): free some space, then start again.`], output);
      assert.equal(code, 1);
    });
  });
});
