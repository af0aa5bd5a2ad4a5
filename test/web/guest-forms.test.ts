// A guest's forms (/login, /register, /forgot-password, the panel's login) need no session: their
// CSRF token comes from a secret in a signed cookie of the browser's own (plugins/session.ts
// formToken), so showing them writes no session row. The check is as strict as the session's: a
// token of another browser's secret, or a secret whose signature does not hold, is a 419; a form
// shown before the visitor had a session still posts once they have one.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { LightMyRequestResponse } from 'fastify';
import { buildApp } from '../../src/app.js';
import { GUEST_CSRF_COOKIE, SESSION_COOKIE, csrfTokens } from '../../src/plugins/session.js';
import { buildTestApp, createTestDatabase, createUser, testConfig, type TestApp } from '../helpers.js';
import { WebClient } from '../support/client.js';
import { isLoggedIn, sessionIdOf } from './support.js';

const GUEST_FORMS = ['/login', '/register', '/forgot-password', '/admin/login'];

/** The Set-Cookie lines of an answer. */
function setCookies(response: LightMyRequestResponse): string[] {
  const header = response.headers['set-cookie'];
  return header === undefined ? [] : Array.isArray(header) ? header : [header];
}

describe('guest forms without a session', () => {
  let t: TestApp;
  let user: Awaited<ReturnType<typeof createUser>>;
  const sessionRows = async () => Number((await t.db.kysely.selectFrom('sessions').select((eb) => eb.fn.countAll<number | string>().as('n')).executeTakeFirstOrThrow()).n);

  before(async () => {
    t = await buildTestApp();
    user = await createUser(t.app, { email: 'guest-forms@example.com', admin: true });
  });
  after(() => t.close());

  for (const path of GUEST_FORMS) {
    it(`shows ${path} with a token, writing no session row and setting only the guest cookie, once`, async () => {
      const rows = await sessionRows();
      const client = new WebClient(t.app);
      const first = await client.get(path);
      assert.equal(first.statusCode, 200);
      assert.ok(client.csrf, 'the form has a token');
      assert.deepEqual(
        setCookies(first).map((line) => line.split('=')[0]),
        [GUEST_CSRF_COOKIE],
      );
      const again = await client.get(path);
      assert.deepEqual(setCookies(again), [], 'the cookie is sent once');
      assert.equal(await sessionRows(), rows);
    });
  }

  it('signs in with the token of the guest cookie, into a new session', async () => {
    const client = new WebClient(t.app);
    await client.get('/login');
    assert.equal(sessionIdOf(client), null);
    const response = await client.post('/login', { email: user.email, password: user.plainPassword });
    assert.equal(response.statusCode, 303);
    assert.ok(sessionIdOf(client));
    assert.equal(await isLoggedIn(client), true);
  });

  it('refuses with 419 a token of another browser’s guest secret', async () => {
    const other = new WebClient(t.app);
    await other.get('/login');
    const client = new WebClient(t.app);
    await client.get('/login');
    const othersToken = other.csrf;
    assert.ok(othersToken, 'the other browser has a token');
    const response = await client.post('/login', { email: user.email, password: user.plainPassword }, { token: othersToken });
    assert.equal(response.statusCode, 419);
    assert.equal(sessionIdOf(client), null);
  });

  it('refuses with 419 a guest cookie whose signature does not hold, and a post with no cookie', async () => {
    const secret = csrfTokens.secretSync();
    const forged = new WebClient(t.app);
    forged.cookies.set(GUEST_CSRF_COOKIE, `${secret}.not-the-signature`);
    assert.equal((await forged.post('/login', { email: user.email, password: user.plainPassword }, { token: csrfTokens.create(secret) })).statusCode, 419);
    const bare = new WebClient(t.app);
    assert.equal((await bare.post('/login', { email: user.email, password: user.plainPassword }, { token: csrfTokens.create(secret) })).statusCode, 419);
  });

  it('keeps a form shown before the visitor had a session valid once they have one', async () => {
    const client = new WebClient(t.app);
    await client.get('/login');
    const token = client.csrf;
    assert.ok(token, "the login page has a token");
    // Another tab asks for a page behind the login: a session begins, holding where to go.
    assert.equal((await client.get('/profile')).statusCode, 302);
    assert.ok(sessionIdOf(client));
    const response = await client.post('/login', { email: user.email, password: user.plainPassword }, { token });
    assert.equal(response.statusCode, 303);
    assert.equal(response.headers.location, '/profile');
  });

  it('refuses with 419 a token of the guest secret once someone is signed in on the session (a planted guest cookie forges nothing)', async () => {
    const client = new WebClient(t.app);
    await client.get('/login');
    const guestToken = client.csrf;
    assert.ok(guestToken, "the login page has a token");
    assert.equal((await client.post('/login', { email: user.email, password: user.plainPassword })).statusCode, 303);
    assert.ok(await isLoggedIn(client));
    // The browser still holds the guest cookie; a form action of the signed-in account takes only the session's secret.
    const forged = await client.post('/logout', {}, { token: guestToken });
    assert.equal(forged.statusCode, 419);
    assert.ok(await isLoggedIn(client));
  });

  for (const path of ['/login', '/register', '/forgot-password']) {
    it(`keeps ${path} rendered for visitors without a session: each gets its own token in the same page, and a settings change shows at once`, async () => {
      const tokenOf = (html: string) => /name="_token" value="([^"]+)"/.exec(html)?.[1];
      const [first, second] = [new WebClient(t.app), new WebClient(t.app)];
      const [a, b] = [await first.get(path), await second.get(path)];
      const [tokenA, tokenB] = [tokenOf(a.body), tokenOf(b.body)];
      assert.ok(tokenA !== undefined && tokenB !== undefined && tokenA !== tokenB, 'each visitor has a token of its own');
      assert.equal(a.body.split(tokenA).join('TOKEN'), b.body.split(tokenB).join('TOKEN'), 'the same page around the tokens');
      assert.ok(!a.body.includes('csrf-mark-'), 'no mark is left in the page');
      // Each token is its own visitor's: it posts with its own cookie, not with the other's.
      const mine = await first.post(path, {}, { token: tokenA });
      assert.notEqual(mine.statusCode, 419);
      const theirs = await first.post(path, {}, { token: tokenB });
      assert.equal(theirs.statusCode, 419);
      await t.app.services.settings.put('site_name', `Renamed for ${path}`, true);
      try {
        const renamed = await new WebClient(t.app).get(path);
        assert.ok(renamed.body.includes(`Renamed for ${path}`), 'the kept form follows the settings');
      } finally {
        await t.app.services.settings.put('site_name', 'Tessera', true);
      }
    });
  }

  it('gives a visitor with a session a token of the session, as before', async () => {
    const client = new WebClient(t.app);
    await client.get('/profile');
    const page = await client.get('/login');
    assert.deepEqual(
      setCookies(page).filter((line) => line.startsWith(`${GUEST_CSRF_COOKIE}=`)),
      [],
    );
    const row = await t.db.kysely.selectFrom('sessions').select('payload').where('id', '=', sessionIdOf(client)!).executeTakeFirstOrThrow();
    assert.match(row.payload, /"_csrf":"[^"]+"/);
  });
});

describe('the guest cookie in production over https', () => {
  it('is named __Host-, Secure, HttpOnly, SameSite=Lax, Path=/ and without Domain', async () => {
    const database = await createTestDatabase();
    const app = await buildApp(testConfig({ NODE_ENV: 'production', APP_URL: 'https://tessera.example' }), { db: database.db });
    app.addHook('onRequest', async (request) => {
      (request.raw.socket as { encrypted?: boolean }).encrypted = true;
    });
    try {
      const response = await app.inject({ method: 'GET', url: '/login' });
      const line = setCookies(response).find((each) => each.startsWith(`__Host-${GUEST_CSRF_COOKIE}=`));
      assert.ok(line, setCookies(response).join(' | '));
      const attributes = line.split(';').slice(1).map((part) => part.trim().toLowerCase());
      for (const wanted of ['secure', 'httponly', 'samesite=lax', 'path=/']) assert.ok(attributes.includes(wanted), `${wanted} in ${line}`);
      assert.ok(!attributes.some((attribute) => attribute.startsWith('domain=')));
      assert.ok(!setCookies(response).some((each) => each.includes(SESSION_COOKIE)), 'no session cookie');
    } finally {
      await app.close();
      await database.drop();
    }
  });
});
