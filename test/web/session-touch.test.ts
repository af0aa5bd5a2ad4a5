// A signed-in page does not rewrite its session row: a session used again without a change has
// its idle end moved at most once per touch interval (a minute, or a tenth of a shorter
// lifetime), so the idle lifetime still ends an unused session and still restarts with use,
// and a session whose content changes is written at once.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { SESSION_COOKIE } from '../../src/plugins/session.js';
import { buildTestApp, createUser, type TestApp } from '../helpers.js';
import { WebClient, setCookie } from '../support/client.js';
import { isLoggedIn, login, sessionIdOf, sessionRow } from './support.js';

const LIFETIME_MINUTES = 30;
const LIFETIME_MS = LIFETIME_MINUTES * 60_000;
// A sentinel no write of the store would leave: a row that still holds it was not written.
const UNTOUCHED = '2000-01-01T00:00:00.000Z';

describe('session touch interval', () => {
  let t: TestApp;
  let user: Awaited<ReturnType<typeof createUser>>;

  before(async () => {
    t = await buildTestApp({ SESSION_LIFETIME: String(LIFETIME_MINUTES) });
    user = await createUser(t.app, { email: 'touch@example.com' });
  });
  after(() => t.close());

  /** A signed-in client whose first page (which stores its CSRF secret) has been seen. */
  async function signedIn(): Promise<{ client: WebClient; id: string }> {
    const client = new WebClient(t.app);
    await login(client, user.email, user.plainPassword);
    assert.equal(await isLoggedIn(client), true);
    return { client, id: sessionIdOf(client)! };
  }

  /** Marks the row, with its idle end `msAgo` ms behind where a request now would put it. */
  async function markRow(id: string, msAgo: number): Promise<string> {
    const expires = new Date(Date.now() + LIFETIME_MS - msAgo).toISOString();
    await t.db.kysely.updateTable('sessions').set({ updated_at: UNTOUCHED, expires_at: expires }).where('id', '=', id).execute();
    return expires;
  }

  it('is a minute for a lifetime of ten minutes or more', () => {
    assert.equal(t.app.services.sessions.touchIntervalMs, 60_000);
  });

  it('leaves the session row unwritten on signed-in pages within the interval', async () => {
    const { client, id } = await signedIn();
    const expires = await markRow(id, 10_000);
    for (const path of ['/dashboard', '/profile', '/user/api-tokens', '/dashboard']) assert.equal((await client.get(path)).statusCode, 200, path);
    const row = await sessionRow(t.db, id);
    assert.equal(row?.updated_at, UNTOUCHED);
    assert.equal(row?.expires_at, expires);
  });

  it('moves the idle end forward on the first request after the interval', async () => {
    const { client, id } = await signedIn();
    await markRow(id, 61_000);
    const before = Date.now();
    assert.equal((await client.get('/dashboard')).statusCode, 200);
    const row = await sessionRow(t.db, id);
    assert.notEqual(row?.updated_at, UNTOUCHED);
    assert.ok(Date.parse(row!.expires_at) >= before + LIFETIME_MS, 'a whole idle lifetime from this request');
  });

  it('sends the session cookie again only when the idle end moves, with the new expiry', async () => {
    const { client, id } = await signedIn();
    await markRow(id, 10_000);
    const within = await client.get('/dashboard');
    assert.equal(setCookie(within, SESSION_COOKIE), undefined, 'no cookie within the interval');
    await markRow(id, 61_000);
    const before = Date.now();
    const moved = await client.get('/dashboard');
    const cookie = setCookie(moved, SESSION_COOKIE);
    assert.ok(cookie?.expires, 'the cookie is sent again');
    assert.ok(cookie.expires.getTime() >= before + LIFETIME_MS - 1_000, 'with a whole idle lifetime from this request');
    assert.equal(cookie.value, client.cookies.get(SESSION_COOKIE), 'the same session');
  });

  it('still ends a session left idle past its lifetime', async () => {
    const { client, id } = await signedIn();
    await t.db.kysely.updateTable('sessions').set({ expires_at: new Date(Date.now() - 1000).toISOString() }).where('id', '=', id).execute();
    assert.equal(await isLoggedIn(client), false);
    assert.equal(await sessionRow(t.db, id), undefined);
  });

  it('writes a change at once, within the interval: the flash a form leaves and the page that takes it', async () => {
    const { client, id } = await signedIn();
    await client.get('/user/api-tokens');
    await markRow(id, 0);
    const created = await client.post('/user/api-tokens', { name: 'touch-test', 'abilities[]': 'profile:read' });
    assert.equal(created.statusCode, 303);
    const flashed = await sessionRow(t.db, id);
    assert.notEqual(flashed?.updated_at, UNTOUCHED, 'the flash was written');
    assert.match(flashed!.payload, /touch-test/);
    await markRow(id, 0);
    assert.match((await client.follow(created)).body, /touch-test/);
    const taken = await sessionRow(t.db, id);
    assert.notEqual(taken?.updated_at, UNTOUCHED, 'the flash was taken out');
    assert.doesNotMatch(taken!.payload, /touch-test/);
  });
});

describe('session touch interval with a short lifetime', () => {
  it('is a tenth of a lifetime under ten minutes', async () => {
    const t = await buildTestApp({ SESSION_LIFETIME: '5' });
    try {
      assert.equal(t.app.services.sessions.touchIntervalMs, 30_000);
    } finally {
      await t.close();
    }
  });
});
