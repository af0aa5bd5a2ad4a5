// Sessions and CSRF on the pages: logout ends the session server-side (a panel login in the same
// browser survives), cookie flags, idle lifetime, 419 on a forged form with nothing changed,
// security headers.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { buildApp } from '../../src/app.js';
import { REMEMBER_COOKIE } from '../../src/http/web/remember.js';
import { SESSION_COOKIE } from '../../src/plugins/session.js';
import { buildTestApp, createTestDatabase, createUser, testConfig, type TestApp } from '../helpers.js';
import { WebClient, setCookie } from '../support/client.js';
import { isLoggedIn, login, mainOf, sessionIdOf, sessionRow } from './support.js';

describe('logout', () => {
  let t: TestApp;
  let user: Awaited<ReturnType<typeof createUser>>;

  before(async () => {
    t = await buildTestApp();
    user = await createUser(t.app, { email: 'logout@example.com' });
  });
  after(() => t.close());

  it('deletes the session row and answers 303 to /', async () => {
    const client = new WebClient(t.app);
    await login(client, user.email, user.plainPassword);
    const id = sessionIdOf(client);
    await client.get('/dashboard');
    const response = await client.post('/logout');
    assert.equal(response.statusCode, 303);
    assert.equal(response.headers.location, '/');
    assert.equal(await sessionRow(t.db, id), undefined);
    assert.equal(await isLoggedIn(client), false);
  });

  it('leaves a replayed copy of the old session cookie logged out', async () => {
    const client = new WebClient(t.app);
    await login(client, user.email, user.plainPassword);
    const copy = client.cookies.get(SESSION_COOKIE)!;
    await client.get('/dashboard');
    await client.post('/logout');
    const replay = new WebClient(t.app);
    replay.cookies.set(SESSION_COOKIE, copy);
    assert.equal(await isLoggedIn(replay), false);
  });

  it('keeps the panel login of the same browser, under a new session id', async () => {
    const admin = await createUser(t.app, { email: 'panel@example.com', admin: true });
    const client = new WebClient(t.app);
    await login(client, user.email, user.plainPassword);
    const id = sessionIdOf(client)!;
    // The panel's own login stores adminUserId in the same session; written here directly.
    const row = await sessionRow(t.db, id);
    const payload = { ...(JSON.parse(row!.payload) as Record<string, unknown>), adminUserId: admin.id };
    await t.db.kysely.updateTable('sessions').set({ payload: JSON.stringify(payload), admin_user_id: admin.id }).where('id', '=', id).execute();

    await client.get('/dashboard');
    assert.equal((await client.post('/logout')).statusCode, 303);
    const newId = sessionIdOf(client);
    assert.ok(newId);
    assert.notEqual(newId, id);
    assert.equal(await sessionRow(t.db, id), undefined);
    const kept = await sessionRow(t.db, newId);
    assert.equal(kept?.admin_user_id, admin.id);
    assert.equal(kept?.user_id, null);
    assert.equal(await isLoggedIn(client), false);
  });

  it('sends a visitor who is not logged in to /login', async () => {
    const client = new WebClient(t.app);
    await client.get('/login');
    const response = await client.post('/logout');
    assert.equal(response.statusCode, 302);
    assert.equal(response.headers.location, '/login');
  });
});

describe('absolute session lifetime (SESSION_ABSOLUTE_LIFETIME)', () => {
  let t: TestApp;
  let user: Awaited<ReturnType<typeof createUser>>;
  const minutesAgo = (minutes: number) => new Date(Date.now() - minutes * 60_000).toISOString();

  before(async () => {
    t = await buildTestApp({ SESSION_LIFETIME: '5', SESSION_ABSOLUTE_LIFETIME: '60' });
    user = await createUser(t.app, { email: 'absolute@example.com' });
  });
  after(() => t.close());

  it('defaults to 24 hours, takes 0 for none, and refuses less than the idle lifetime, naming the variable', () => {
    assert.equal(testConfig().sessionAbsoluteLifetimeMinutes, 1440);
    assert.equal(testConfig({ SESSION_ABSOLUTE_LIFETIME: '0' }).sessionAbsoluteLifetimeMinutes, 0);
    assert.throws(() => testConfig({ SESSION_LIFETIME: '120', SESSION_ABSOLUTE_LIFETIME: '60' }), /^Error: SESSION_ABSOLUTE_LIFETIME must be 0 \(no limit\) or at least SESSION_LIFETIME \(120\), got 60\./);
    for (const value of ['-1', 'a day', '1.5']) assert.throws(() => testConfig({ SESSION_ABSOLUTE_LIFETIME: value }), /SESSION_ABSOLUTE_LIFETIME/);
  });

  it('ends a session that long after it began, however active, even when its cookie comes back', async () => {
    const client = new WebClient(t.app);
    await login(client, user.email, user.plainPassword);
    const id = sessionIdOf(client)!;
    await t.db.kysely.updateTable('sessions').set({ created_at: minutesAgo(59) }).where('id', '=', id).execute();
    assert.equal(await isLoggedIn(client), true, 'within the hour');
    await t.db.kysely.updateTable('sessions').set({ created_at: minutesAgo(61) }).where('id', '=', id).execute();
    const row = await sessionRow(t.db, id);
    assert.ok(Date.parse(row!.expires_at) > Date.now(), 'the idle lifetime alone would keep it');
    assert.equal(await isLoggedIn(client), false);
    assert.equal(await sessionRow(t.db, id), undefined);
    // Signing in again starts a new session, with a new start.
    await login(client, user.email, user.plainPassword);
    assert.equal(await isLoggedIn(client), true);
    const fresh = await sessionRow(t.db, sessionIdOf(client));
    assert.ok(Date.now() - Date.parse(fresh!.created_at!) < 60_000);
  });

  it('keeps the time a session began while each request moves its idle end', async () => {
    const client = new WebClient(t.app);
    await login(client, user.email, user.plainPassword);
    const id = sessionIdOf(client)!;
    const began = minutesAgo(30);
    await t.db.kysely.updateTable('sessions').set({ created_at: began, expires_at: new Date(Date.now() + 60_000).toISOString() }).where('id', '=', id).execute();
    assert.equal(await isLoggedIn(client), true);
    const row = await sessionRow(t.db, sessionIdOf(client));
    assert.equal(row?.created_at, began);
    assert.ok(Date.parse(row!.expires_at) > Date.now() + 4 * 60_000, 'the idle lifetime restarted');
  });

  it('deletes sessions past their absolute lifetime when pruning', async () => {
    const client = new WebClient(t.app);
    await login(client, user.email, user.plainPassword);
    const id = sessionIdOf(client)!;
    await t.db.kysely.updateTable('sessions').set({ created_at: minutesAgo(61) }).where('id', '=', id).execute();
    assert.ok((await t.app.services.sessions.prune()) >= 1);
    assert.equal(await sessionRow(t.db, id), undefined);
  });

  it('sets no limit with SESSION_ABSOLUTE_LIFETIME=0', async () => {
    const unlimited = await buildTestApp({ SESSION_ABSOLUTE_LIFETIME: '0' });
    try {
      const other = await createUser(unlimited.app, { email: 'unlimited@example.com' });
      const client = new WebClient(unlimited.app);
      await login(client, other.email, other.plainPassword);
      await unlimited.db.kysely.updateTable('sessions').set({ created_at: minutesAgo(60 * 24 * 365) }).where('id', '=', sessionIdOf(client)!).execute();
      assert.equal(await isLoggedIn(client), true);
    } finally {
      await unlimited.close();
    }
  });
});

describe('session cookie and lifetime', () => {
  let t: TestApp;
  let user: Awaited<ReturnType<typeof createUser>>;

  before(async () => {
    t = await buildTestApp({ SESSION_LIFETIME: '5' });
    user = await createUser(t.app, { email: 'cookie@example.com' });
  });
  after(() => t.close());

  it('sets the session cookie HttpOnly, SameSite=Lax, path /, not Secure on an http APP_URL', async () => {
    const client = new WebClient(t.app);
    await client.get('/login');
    const response = await client.post('/login', { email: user.email, password: user.plainPassword });
    const cookie = setCookie(response, SESSION_COOKIE);
    assert.ok(cookie);
    assert.equal(cookie.httpOnly, true);
    assert.equal(cookie.sameSite, 'Lax');
    assert.equal(cookie.path, '/');
    assert.equal(cookie.secure, undefined);
  });

  it('stores the session in the database with SESSION_LIFETIME minutes of idle life', async () => {
    const client = new WebClient(t.app);
    await login(client, user.email, user.plainPassword);
    const row = await sessionRow(t.db, sessionIdOf(client));
    assert.equal(row?.user_id, user.id);
    const left = Date.parse(row!.expires_at) - Date.now();
    assert.ok(left > 4 * 60_000 && left <= 5 * 60_000, `${left} ms`);
  });

  it('ends a session idle past its lifetime, even when its cookie comes back', async () => {
    const client = new WebClient(t.app);
    await login(client, user.email, user.plainPassword);
    const id = sessionIdOf(client)!;
    await t.db.kysely.updateTable('sessions').set({ expires_at: new Date(Date.now() - 1000).toISOString() }).where('id', '=', id).execute();
    assert.equal(await isLoggedIn(client), false);
    assert.equal(await sessionRow(t.db, id), undefined);
  });

  it('restarts the idle lifetime with each request', async () => {
    const client = new WebClient(t.app);
    await login(client, user.email, user.plainPassword);
    const id = sessionIdOf(client)!;
    const soon = new Date(Date.now() + 60_000).toISOString();
    await t.db.kysely.updateTable('sessions').set({ expires_at: soon }).where('id', '=', id).execute();
    assert.equal(await isLoggedIn(client), true);
    const row = await sessionRow(t.db, sessionIdOf(client));
    assert.ok(Date.parse(row!.expires_at) > Date.parse(soon));
  });
});

describe('cookies on an https APP_URL', () => {
  it('are Secure', async () => {
    const database = await createTestDatabase();
    const app = await buildApp(testConfig({ APP_URL: 'https://tessera.example' }), { db: database.db });
    // The app sits behind TLS: the request arrives encrypted (light-my-request has no https).
    app.addHook('onRequest', async (request) => {
      (request.raw.socket as { encrypted?: boolean }).encrypted = true;
    });
    await app.ready();
    try {
      const user = await createUser(app, { email: 'secure@example.com' });
      const client = new WebClient(app);
      await client.get('/login');
      const response = await client.post('/login', { email: user.email, password: user.plainPassword, remember: '1' });
      assert.equal(response.statusCode, 303);
      const cookie = setCookie(response, SESSION_COOKIE);
      assert.equal(cookie?.secure, true);
      assert.equal(cookie?.httpOnly, true);
      assert.equal(setCookie(response, REMEMBER_COOKIE)?.secure, true, 'the remember cookie too');
    } finally {
      await app.close();
      await database.drop();
    }
  });
});

describe('CSRF protection', () => {
  let t: TestApp;
  let user: Awaited<ReturnType<typeof createUser>>;

  before(async () => {
    t = await buildTestApp();
    user = await createUser(t.app, { name: 'Original Name', email: 'csrf@example.com', password: 'csrf-password-1' });
  });
  after(() => t.close());

  type Forged = { name: string; path: string; form: Record<string, string>; loggedIn: boolean; unchanged: () => Promise<void> };
  const forged: Forged[] = [
    {
      name: 'a login',
      path: '/login',
      form: { email: 'csrf@example.com', password: 'csrf-password-1' },
      loggedIn: false,
      unchanged: async () => undefined,
    },
    {
      name: 'a registration',
      path: '/register',
      form: { name: 'Mallory', email: 'mallory@example.com', password: 'mallory-password', password_confirmation: 'mallory-password' },
      loggedIn: false,
      unchanged: async () => assert.equal(await t.app.services.users.findByEmail('mallory@example.com'), undefined),
    },
    {
      name: 'a reset-link request',
      path: '/forgot-password',
      form: { email: 'csrf@example.com' },
      loggedIn: false,
      unchanged: async () => assert.equal(await t.db.kysely.selectFrom('password_reset_tokens').select('email').executeTakeFirst(), undefined),
    },
    {
      name: 'a password reset',
      path: '/reset-password',
      form: { token: 'x', email: 'csrf@example.com', password: 'new-password-99', password_confirmation: 'new-password-99' },
      loggedIn: false,
      unchanged: async () => assert.ok(await t.app.services.users.attempt('csrf@example.com', 'csrf-password-1')),
    },
    {
      name: 'a profile change',
      path: '/profile',
      form: { name: 'Hacked', email: 'hacked@example.com' },
      loggedIn: true,
      unchanged: async () => assert.equal((await t.app.services.users.findById(user.id))?.name, 'Original Name'),
    },
    {
      name: 'a password change',
      path: '/profile/password',
      form: { current_password: 'csrf-password-1', password: 'hacked-password-1', password_confirmation: 'hacked-password-1' },
      loggedIn: true,
      unchanged: async () => assert.ok(await t.app.services.users.attempt('csrf@example.com', 'csrf-password-1')),
    },
    { name: 'a verification resend', path: '/email/verification-notification', form: {}, loggedIn: true, unchanged: async () => undefined },
    { name: 'a logout', path: '/logout', form: {}, loggedIn: true, unchanged: async () => undefined },
  ];

  for (const c of forged) {
    for (const [label, token] of [['without a token', false], ['with a wrong token', 'forged-token-value']] as const) {
      it(`answers ${c.name} ${label} with the 419 page and changes nothing`, async () => {
        const client = new WebClient(t.app);
        if (c.loggedIn) await login(client, user.email, 'csrf-password-1');
        else await client.get('/login');
        const response = await client.post(c.path, c.form, { token });
        assert.equal(response.statusCode, 419);
        assert.match(String(response.headers['content-type']), /text\/html/);
        assert.match(mainOf(response.body), /Page expired/);
        await c.unchanged();
        assert.equal(await isLoggedIn(client), c.loggedIn, 'the login state is unchanged');
      });
    }
  }

  it("refuses another session's token", async () => {
    const other = new WebClient(t.app);
    await other.get('/login');
    const client = new WebClient(t.app);
    await client.get('/login');
    const response = await client.post('/login', { email: 'csrf@example.com', password: 'csrf-password-1' }, { token: other.csrf! });
    assert.equal(response.statusCode, 419);
  });

  it('answers a JSON request without a token with the 419 envelope', async () => {
    const client = new WebClient(t.app);
    await client.get('/login');
    const response = await client.post('/login', { email: 'csrf@example.com', password: 'csrf-password-1' }, { token: false, headers: { accept: 'application/json' } });
    assert.equal(response.statusCode, 419);
    assert.deepEqual(response.json(), { message: 'CSRF token mismatch.', errors: {} });
  });
});

describe('security headers on pages', () => {
  let t: TestApp;
  before(async () => {
    t = await buildTestApp();
  });
  after(() => t.close());

  for (const path of ['/login', '/register', '/forgot-password', '/reset-password/abc']) {
    it(`sends CSP without inline script, frame denial, nosniff, a referrer policy and no-store on ${path}`, async () => {
      const response = await t.app.inject({ url: path });
      assert.equal(response.statusCode, 200);
      const csp = String(response.headers['content-security-policy']);
      assert.match(csp, /default-src 'self'/);
      assert.match(csp, /script-src 'self'(;|$)/);
      assert.ok(!csp.includes('unsafe-inline'), csp);
      assert.match(csp, /frame-ancestors 'none'/);
      assert.match(csp, /form-action 'self'/);
      assert.equal(response.headers['x-frame-options'], 'DENY');
      assert.equal(response.headers['x-content-type-options'], 'nosniff');
      assert.equal(response.headers['referrer-policy'], 'strict-origin-when-cross-origin');
      assert.equal(response.headers['cache-control'], 'no-store');
      assert.ok(!/<script(?![^>]*\bsrc=)/.test(response.body), 'no inline script');
      assert.ok(!/\sstyle="/.test(response.body), 'no inline style');
    });
  }
});
