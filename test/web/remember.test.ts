// "Remember me": a per-device token, stored hashed, rotated at each use; logging out on one
// device leaves the others remembered.
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { REMEMBER_COOKIE } from '../../src/http/web/remember.js';
import { SESSION_COOKIE } from '../../src/plugins/session.js';
import { buildTestApp, createUser, type TestApp } from '../helpers.js';
import { WebClient, setCookie } from '../support/client.js';
import { isLoggedIn, login } from './support.js';

const sha256 = (text: string) => createHash('sha256').update(text).digest('hex');

describe('remember me', () => {
  let t: TestApp;
  let user: Awaited<ReturnType<typeof createUser>>;

  before(async () => {
    t = await buildTestApp();
    user = await createUser(t.app, { email: 'ada@example.com', password: 'analytical-engine' });
  });
  after(() => t.close());

  /** A browser that logged in with "remember me", then was closed (its session cookie gone). */
  const restartedBrowser = async () => {
    const client = new WebClient(t.app);
    await login(client, user.email, user.plainPassword, { remember: '1' });
    client.cookies.delete(SESSION_COOKIE);
    return client;
  };
  const rows = () => t.db.kysely.selectFrom('remember_tokens').selectAll().where('user_id', '=', user.id).execute();

  it('sets a long-lived HttpOnly, SameSite=Lax cookie when "remember" is ticked', async () => {
    const client = new WebClient(t.app);
    await client.get('/login');
    const response = await client.post('/login', { email: user.email, password: user.plainPassword, remember: '1' });
    const cookie = setCookie(response, REMEMBER_COOKIE);
    assert.ok(cookie);
    assert.equal(cookie.maxAge, 30 * 24 * 3600);
    assert.equal(cookie.httpOnly, true);
    assert.equal(cookie.sameSite, 'Lax');
    assert.equal(cookie.path, '/');
    assert.equal(cookie.secure, undefined, 'not Secure on an http APP_URL');
  });

  it('sets no remember cookie without "remember"', async () => {
    const client = new WebClient(t.app);
    await client.get('/login');
    const response = await client.post('/login', { email: user.email, password: user.plainPassword });
    assert.equal(setCookie(response, REMEMBER_COOKIE), undefined);
  });

  it('stores the token as selector + SHA-256 of the validator, never the validator itself', async () => {
    const client = await restartedBrowser();
    const [selector, validator] = client.cookies.get(REMEMBER_COOKIE)!.split('.');
    const row = await t.db.kysely.selectFrom('remember_tokens').selectAll().where('selector', '=', selector!).executeTakeFirstOrThrow();
    assert.equal(row.user_id, user.id);
    assert.equal(row.validator_hash, sha256(validator!));
    assert.ok(!JSON.stringify(row).includes(validator!));
  });

  it('logs a restarted browser back in, with a new session and a rotated cookie', async () => {
    const client = await restartedBrowser();
    const before = client.cookies.get(REMEMBER_COOKIE)!;
    const response = await client.get('/dashboard');
    assert.equal(response.statusCode, 200);
    assert.ok(client.cookies.get(SESSION_COOKIE), 'a session was started');
    const rotated = client.cookies.get(REMEMBER_COOKIE)!;
    assert.notEqual(rotated, before);
    assert.equal(rotated.split('.')[0], before.split('.')[0], 'same device, same selector');
  });

  it('refuses a remember cookie once it has been used (a copy works once)', async () => {
    const client = await restartedBrowser();
    const stolen = client.cookies.get(REMEMBER_COOKIE)!;
    assert.equal(await isLoggedIn(client), true);
    const thief = new WebClient(t.app);
    thief.cookies.set(REMEMBER_COOKIE, stolen);
    const response = await thief.get('/dashboard');
    assert.equal(response.statusCode, 302);
    assert.equal(response.headers.location, '/login');
    assert.equal(thief.cookies.has(REMEMBER_COOKIE), false, 'the dead cookie is cleared');
  });

  const bad: { name: string; value: (good: string) => string }[] = [
    { name: 'a tampered validator', value: (good) => `${good.slice(0, -1)}${good.endsWith('A') ? 'B' : 'A'}` },
    { name: 'an unknown selector', value: (good) => `AAAAAAAAAAAAAAAA.${good.split('.')[1]}` },
    { name: 'garbage', value: () => 'not-a-remember-cookie' },
  ];
  for (const c of bad) {
    it(`logs nobody in with ${c.name}`, async () => {
      const client = await restartedBrowser();
      client.cookies.set(REMEMBER_COOKIE, c.value(client.cookies.get(REMEMBER_COOKIE)!));
      assert.equal(await isLoggedIn(client), false);
    });
  }

  it('logs nobody in with an expired token, and deletes it', async () => {
    const client = await restartedBrowser();
    const selector = client.cookies.get(REMEMBER_COOKIE)!.split('.')[0]!;
    await t.db.kysely.updateTable('remember_tokens').set({ expires_at: new Date(Date.now() - 1000).toISOString() }).where('selector', '=', selector).execute();
    assert.equal(await isLoggedIn(client), false);
    assert.equal(await t.db.kysely.selectFrom('remember_tokens').select('id').where('selector', '=', selector).executeTakeFirst(), undefined);
  });

  it('forgets only this device at logout: another remembered device stays logged in', async () => {
    const laptop = new WebClient(t.app);
    const phone = new WebClient(t.app);
    await login(laptop, user.email, user.plainPassword, { remember: '1' });
    await login(phone, user.email, user.plainPassword, { remember: '1' });
    const laptopCookie = laptop.cookies.get(REMEMBER_COOKIE)!;
    await laptop.get('/dashboard');
    const logout = await laptop.post('/logout');
    assert.equal(logout.statusCode, 303);
    assert.equal(laptop.cookies.has(REMEMBER_COOKIE), false);
    const replay = new WebClient(t.app);
    replay.cookies.set(REMEMBER_COOKIE, laptopCookie);
    assert.equal(await isLoggedIn(replay), false, "the laptop's token is gone");
    phone.cookies.delete(SESSION_COOKIE);
    assert.equal(await isLoggedIn(phone), true, 'the phone is still remembered');
  });

  it('forgets every device when the password is reset', async () => {
    const client = await restartedBrowser();
    assert.ok((await rows()).length > 0);
    await t.app.services.auth.signOutEverywhere(user.id);
    assert.equal((await rows()).length, 0);
    assert.equal(await isLoggedIn(client), false);
  });
});
