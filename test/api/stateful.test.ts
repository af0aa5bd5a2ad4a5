// First-party SPAs on the session cookie (spec: Authentication, rule 4): which origins the
// cookie authenticates, the XSRF-TOKEN cookie and header, bearer tokens winning, and CORS per
// class of origin.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { FastifyInstance } from 'fastify';
import { createUser, issueToken, type TestApp } from '../helpers.js';
import { CookieJar, TEST_LOGIN_PATH, buildStatefulApp } from './stateful-support.js';

const SPA = 'http://localhost:5173';
const PARTNER = 'https://partner.example';
const CSRF_MISMATCH = { message: 'CSRF token mismatch.', errors: {} };
const UNAUTHENTICATED = { message: 'Unauthenticated.', errors: {} };

type User = Awaited<ReturnType<typeof createUser>>;

/** A browser session on the SPA: XSRF cookie fetched, then logged in (test-only route). */
async function loggedInJar(app: FastifyInstance, user: { id: number }): Promise<CookieJar> {
  const jar = new CookieJar();
  jar.take(await app.inject({ url: '/sanctum/csrf-cookie', headers: { origin: SPA } }));
  jar.take(await app.inject({ method: 'POST', url: `${TEST_LOGIN_PATH}/${user.id}`, headers: { origin: SPA, cookie: jar.header() } }));
  return jar;
}

function xsrf(jar: CookieJar): string {
  const value = jar.get('XSRF-TOKEN');
  assert.ok(value !== undefined, 'no XSRF-TOKEN cookie');
  return decodeURIComponent(value);
}

describe('stateful SPA authentication', () => {
  let t: TestApp;
  let user: User;
  let jar: CookieJar;

  before(async () => {
    t = await buildStatefulApp({ SANCTUM_STATEFUL_DOMAINS: 'localhost:5173, spa.example.com', CORS_ALLOWED_ORIGINS: PARTNER });
    user = await createUser(t.app, { name: 'Grace Hopper' });
    jar = await loggedInJar(t.app, user);
  });
  after(() => t.close());

  describe('GET /sanctum/csrf-cookie', () => {
    it('answers 204 with an XSRF-TOKEN cookie readable by JavaScript (not HttpOnly), SameSite=Lax, and an HttpOnly session cookie', async () => {
      const response = await t.app.inject({ url: '/sanctum/csrf-cookie', headers: { origin: SPA } });
      assert.equal(response.statusCode, 204);
      assert.equal(response.body, '');
      const raw = ([] as string[]).concat(response.headers['set-cookie'] ?? []);
      const xsrfCookie = raw.find((line) => line.startsWith('XSRF-TOKEN='));
      const sessionCookie = raw.find((line) => line.startsWith('tessera_session='));
      assert.ok(xsrfCookie, raw.join('\n'));
      assert.ok(sessionCookie, raw.join('\n'));
      assert.doesNotMatch(xsrfCookie, /HttpOnly/i);
      assert.match(xsrfCookie, /SameSite=Lax/i);
      assert.match(xsrfCookie, /Path=\//);
      assert.match(sessionCookie, /HttpOnly/i);
      assert.equal(response.headers['cache-control'], 'no-store');
    });

    it('gives a token that passes the CSRF check of the same session only', async () => {
      const first = new CookieJar().take(await t.app.inject({ url: '/sanctum/csrf-cookie' }));
      const second = await loggedInJar(t.app, user);
      // The first visitor's token, sent with the second visitor's session: refused.
      const crossed = await t.app.inject({
        method: 'PUT',
        url: '/api/user',
        headers: { origin: SPA, cookie: second.header(), 'x-xsrf-token': xsrf(first) },
        payload: { name: 'Grace Hopper' },
      });
      assert.equal(crossed.statusCode, 419);
    });
  });

  describe('which requests the session cookie authenticates', () => {
    const cases: { name: string; headers: Record<string, string>; status: number }[] = [
      { name: 'Origin listed with its port', headers: { origin: SPA }, status: 200 },
      { name: 'Origin listed, other scheme (the list names hosts)', headers: { origin: 'https://localhost:5173' }, status: 200 },
      { name: 'Origin listed without a port', headers: { origin: 'https://spa.example.com' }, status: 200 },
      { name: 'Origin listed, in capitals', headers: { origin: 'http://LOCALHOST:5173' }, status: 200 },
      { name: 'no Origin, Referer listed', headers: { referer: `${SPA}/account/settings?tab=1` }, status: 200 },
      { name: 'Origin unlisted', headers: { origin: 'http://evil.example' }, status: 401 },
      { name: 'Origin on a listed host but another port', headers: { origin: 'http://localhost:5174' }, status: 401 },
      { name: 'Origin without the port the list requires', headers: { origin: 'http://localhost' }, status: 401 },
      { name: 'Origin with a port the list does not give', headers: { origin: 'https://spa.example.com:8443' }, status: 401 },
      { name: 'Origin ending like a listed host', headers: { origin: 'http://evil-spa.example.com' }, status: 401 },
      { name: 'Origin starting like a listed host', headers: { origin: 'http://localhost:5173.evil.example' }, status: 401 },
      { name: 'Origin unlisted, Referer listed (Origin decides)', headers: { origin: 'http://evil.example', referer: `${SPA}/` }, status: 401 },
      { name: 'Origin "null", Referer listed', headers: { origin: 'null', referer: `${SPA}/` }, status: 401 },
      { name: 'Referer unlisted', headers: { referer: 'http://evil.example/page' }, status: 401 },
      { name: 'Referer not a URL', headers: { referer: 'localhost:5173' }, status: 401 },
      { name: 'neither Origin nor Referer', headers: {}, status: 401 },
      { name: 'Origin of the third-party CORS list', headers: { origin: PARTNER }, status: 401 },
    ];
    for (const { name, headers, status } of cases) {
      it(`${status === 200 ? 'accepts' : 'refuses with 401'} the cookie: ${name}`, async () => {
        const response = await t.app.inject({ url: '/api/user', headers: { accept: 'application/json', cookie: jar.header(), ...headers } });
        assert.equal(response.statusCode, status, response.body);
        if (status === 200) assert.equal((response.json() as { id: number }).id, user.id);
        else assert.deepEqual(response.json(), UNAUTHENTICATED);
      });
    }

    it('refuses with 401 a listed origin whose session has no logged-in user', async () => {
      const anonymous = new CookieJar().take(await t.app.inject({ url: '/sanctum/csrf-cookie', headers: { origin: SPA } }));
      const response = await t.app.inject({ url: '/api/user', headers: { origin: SPA, cookie: anonymous.header() } });
      assert.equal(response.statusCode, 401);
    });

    it('refuses with 401 a session whose user has been deleted', async () => {
      const gone = await createUser(t.app);
      const goneJar = await loggedInJar(t.app, gone);
      await t.db.kysely.deleteFrom('users').where('id', '=', gone.id).execute();
      const response = await t.app.inject({ url: '/api/user', headers: { origin: SPA, cookie: goneJar.header() } });
      assert.equal(response.statusCode, 401);
    });

    it('never authenticates by cookie when SANCTUM_STATEFUL_DOMAINS is empty', async () => {
      const bare = await buildStatefulApp({});
      try {
        const someone = await createUser(bare.app);
        const bareJar = new CookieJar();
        bareJar.take(await bare.app.inject({ method: 'POST', url: `${TEST_LOGIN_PATH}/${someone.id}` }));
        assert.ok(bareJar.get('tessera_session'));
        for (const headers of [{ origin: SPA }, { referer: `${SPA}/` }, { origin: 'http://localhost:3000' }, {}]) {
          const response = await bare.app.inject({ url: '/api/user', headers: { ...headers, cookie: bareJar.header() } });
          assert.equal(response.statusCode, 401, JSON.stringify(headers));
        }
      } finally {
        await bare.close();
      }
    });

    it('authenticates the cookie caller for every ability (posts:write for an admin)', async () => {
      const admin = await createUser(t.app, { admin: true });
      const adminJar = await loggedInJar(t.app, admin);
      const response = await t.app.inject({
        method: 'POST',
        url: '/api/posts',
        headers: { origin: SPA, cookie: adminJar.header(), 'x-xsrf-token': xsrf(adminJar) },
        payload: { title: 'Written from the SPA', status: 'draft' },
      });
      assert.equal(response.statusCode, 201, response.body);
    });
  });

  describe('a bearer token always wins over the cookie', () => {
    it('answers as the token user when a listed origin also sends another user’s session cookie', async () => {
      const other = await createUser(t.app, { name: 'Token Holder' });
      const token = await issueToken(t.app, other.email, other.plainPassword);
      const response = await t.app.inject({ url: '/api/user', headers: { origin: SPA, cookie: jar.header(), authorization: `Bearer ${token}` } });
      assert.equal(response.statusCode, 200);
      assert.equal((response.json() as { id: number }).id, other.id);
    });

    const badCredentials: { name: string; authorization: string }[] = [
      { name: 'an unknown bearer token', authorization: 'Bearer 999999|nope' },
      { name: 'a malformed bearer header', authorization: 'Bearer ' },
      { name: 'another scheme', authorization: 'Basic dXNlcjpwYXNz' },
    ];
    for (const { name, authorization } of badCredentials) {
      it(`refuses with 401 ${name}, though a valid session cookie comes along`, async () => {
        const response = await t.app.inject({ url: '/api/user', headers: { origin: SPA, cookie: jar.header(), authorization } });
        assert.equal(response.statusCode, 401);
        assert.deepEqual(response.json(), UNAUTHENTICATED);
      });
    }

    it('needs no X-XSRF-TOKEN for a write authenticated by a token, even from a listed origin with a cookie', async () => {
      const token = await issueToken(t.app, user.email, user.plainPassword);
      const response = await t.app.inject({
        method: 'PUT',
        url: '/api/user',
        headers: { origin: SPA, cookie: jar.header(), authorization: `Bearer ${token}` },
        payload: { name: 'Grace Hopper' },
      });
      assert.equal(response.statusCode, 200, response.body);
    });
  });

  describe('X-XSRF-TOKEN on cookie-authenticated writes', () => {
    const writes: { name: string; method: 'PUT' | 'DELETE'; url: string; payload?: object; header?: (jar: CookieJar) => string }[] = [
      { name: 'PUT /api/user without the header', method: 'PUT', url: '/api/user', payload: { name: 'Changed' } },
      { name: 'PUT /api/user with a forged header', method: 'PUT', url: '/api/user', payload: { name: 'Changed' }, header: () => 'forged-token' },
      { name: 'PUT /api/user with the token’s secret half cut off', method: 'PUT', url: '/api/user', payload: { name: 'Changed' }, header: (j) => xsrf(j).split('-')[0] ?? '' },
      { name: 'PUT /api/user/password without the header', method: 'PUT', url: '/api/user/password', payload: { current_password: 'x', password: 'y' } },
      { name: 'DELETE /api/tokens without the header', method: 'DELETE', url: '/api/tokens' },
    ];
    for (const { name, method, url, payload, header } of writes) {
      it(`answers 419 with the JSON envelope: ${name}`, async () => {
        const headers: Record<string, string> = { origin: SPA, accept: 'application/json', cookie: jar.header() };
        if (header !== undefined) headers['x-xsrf-token'] = header(jar);
        const response = await t.app.inject({ method, url, headers, ...(payload === undefined ? {} : { payload }) });
        assert.equal(response.statusCode, 419);
        assert.match(String(response.headers['content-type']), /^application\/json/);
        assert.deepEqual(response.json(), CSRF_MISMATCH);
      });
    }

    it('changes nothing when refused with 419', async () => {
      await t.app.inject({ method: 'PUT', url: '/api/user', headers: { origin: SPA, cookie: jar.header() }, payload: { name: 'Forged Name' } });
      const row = await t.db.kysely.selectFrom('users').select('name').where('id', '=', user.id).executeTakeFirstOrThrow();
      assert.equal(row.name, 'Grace Hopper');
    });

    it('accepts the write with the XSRF-TOKEN cookie sent back as X-XSRF-TOKEN', async () => {
      const response = await t.app.inject({
        method: 'PUT',
        url: '/api/user',
        headers: { origin: SPA, cookie: jar.header(), 'x-xsrf-token': xsrf(jar) },
        payload: { name: 'Grace B. Hopper' },
      });
      assert.equal(response.statusCode, 200, response.body);
      assert.equal((response.json() as { name: string }).name, 'Grace B. Hopper');
      await t.app.inject({ method: 'PUT', url: '/api/user', headers: { origin: SPA, cookie: jar.header(), 'x-xsrf-token': xsrf(jar) }, payload: { name: 'Grace Hopper' } });
    });

    it('renews the XSRF-TOKEN cookie after login, so the token from before the new session id still has a successor that works', async () => {
      const fresh = new CookieJar().take(await t.app.inject({ url: '/sanctum/csrf-cookie', headers: { origin: SPA } }));
      const before = xsrf(fresh);
      const login = await t.app.inject({ method: 'POST', url: `${TEST_LOGIN_PATH}/${user.id}`, headers: { origin: SPA, cookie: fresh.header() } });
      fresh.take(login);
      assert.notEqual(xsrf(fresh), before, 'the login answer carries a new XSRF-TOKEN');
      const stale = await t.app.inject({ method: 'PUT', url: '/api/user', headers: { origin: SPA, cookie: fresh.header(), 'x-xsrf-token': before }, payload: { name: 'Grace Hopper' } });
      assert.equal(stale.statusCode, 419, 'the session was renewed at login, and its CSRF secret with it');
      const renewed = await t.app.inject({ method: 'PUT', url: '/api/user', headers: { origin: SPA, cookie: fresh.header(), 'x-xsrf-token': xsrf(fresh) }, payload: { name: 'Grace Hopper' } });
      assert.equal(renewed.statusCode, 200, renewed.body);
    });

    it('needs no X-XSRF-TOKEN for cookie-authenticated reads', async () => {
      const response = await t.app.inject({ url: '/api/user', headers: { origin: SPA, cookie: jar.header() } });
      assert.equal(response.statusCode, 200);
    });
  });

  describe('the JSON session actions, called by the SPA', () => {
    const spaHeaders = (spa: CookieJar) => ({ origin: SPA, accept: 'application/json', cookie: spa.header(), 'x-xsrf-token': xsrf(spa) });
    const start = async () => new CookieJar().take(await t.app.inject({ url: '/sanctum/csrf-cookie', headers: { origin: SPA } }));

    it('logs in (204), reads and writes /api by cookie, logs out (204), and is 401 after', async () => {
      const spa = await start();
      const login = await t.app.inject({ method: 'POST', url: '/login', headers: spaHeaders(spa), payload: { email: user.email, password: user.plainPassword } });
      assert.equal(login.statusCode, 204, login.body);
      assert.equal(login.headers['access-control-allow-origin'], SPA);
      assert.equal(login.headers['access-control-allow-credentials'], 'true');
      spa.take(login);
      const me = await t.app.inject({ url: '/api/user', headers: { origin: SPA, cookie: spa.header() } });
      assert.equal(me.statusCode, 200);
      assert.equal((me.json() as { id: number }).id, user.id);
      // The XSRF-TOKEN renewed by the login answer is the one that passes now.
      const write = await t.app.inject({ method: 'PUT', url: '/api/user', headers: spaHeaders(spa), payload: { name: 'Grace Hopper' } });
      assert.equal(write.statusCode, 200, write.body);
      const logout = await t.app.inject({ method: 'POST', url: '/logout', headers: spaHeaders(spa) });
      assert.equal(logout.statusCode, 204, logout.body);
      spa.take(logout);
      const after = await t.app.inject({ url: '/api/user', headers: { origin: SPA, cookie: spa.header() } });
      assert.equal(after.statusCode, 401);
    });

    it('answers a failed login with the 422 envelope, CORS-readable by the SPA', async () => {
      const spa = await start();
      const response = await t.app.inject({ method: 'POST', url: '/login', headers: spaHeaders(spa), payload: { email: user.email, password: 'not the password' } });
      assert.equal(response.statusCode, 422);
      assert.deepEqual(Object.keys(response.json() as object).sort(), ['errors', 'message']);
      assert.ok((response.json() as { errors: Record<string, string[]> }).errors.email);
      assert.equal(response.headers['access-control-allow-origin'], SPA);
    });

    it('refuses the JSON login with 419 without X-XSRF-TOKEN', async () => {
      const spa = await start();
      const response = await t.app.inject({ method: 'POST', url: '/login', headers: { origin: SPA, accept: 'application/json', cookie: spa.header() }, payload: { email: user.email, password: user.plainPassword } });
      assert.equal(response.statusCode, 419);
      assert.deepEqual(response.json(), CSRF_MISMATCH);
    });

    it('registers (204) and the new account is then the cookie caller of /api', async () => {
      const spa = await start();
      const response = await t.app.inject({
        method: 'POST',
        url: '/register',
        headers: spaHeaders(spa),
        payload: { name: 'Katherine Johnson', email: 'katherine@example.com', password: 'orbital mechanics 1962', password_confirmation: 'orbital mechanics 1962' },
      });
      assert.equal(response.statusCode, 204, response.body);
      spa.take(response);
      const me = await t.app.inject({ url: '/api/user', headers: { origin: SPA, cookie: spa.header() } });
      assert.equal((me.json() as { email: string }).email, 'katherine@example.com');
    });

    it('answers forgot-password with 204 and a bad reset token with the 422 envelope', async () => {
      const spa = await start();
      const forgot = await t.app.inject({ method: 'POST', url: '/forgot-password', headers: spaHeaders(spa), payload: { email: user.email } });
      assert.equal(forgot.statusCode, 204, forgot.body);
      const reset = await t.app.inject({
        method: 'POST',
        url: '/reset-password',
        headers: spaHeaders(spa),
        payload: { token: 'not-a-token', email: user.email, password: 'a brand new password 7', password_confirmation: 'a brand new password 7' },
      });
      assert.equal(reset.statusCode, 422);
      assert.deepEqual(Object.keys(reset.json() as object).sort(), ['errors', 'message']);
    });
  });

  describe('CORS per class of origin', () => {
    type Expect = { allowOrigin: string | undefined; credentials: boolean };
    const withCredentials = (origin: string): Expect => ({ allowOrigin: origin, credentials: true });
    const withoutCredentials = (origin: string): Expect => ({ allowOrigin: origin, credentials: false });
    const none: Expect = { allowOrigin: undefined, credentials: false };

    const cases: { name: string; method: 'GET' | 'OPTIONS'; url: string; origin: string; expect: Expect; requestHeaders?: string }[] = [
      { name: 'stateful origin, API read', method: 'GET', url: '/api/posts', origin: SPA, expect: withCredentials(SPA) },
      { name: 'stateful origin, CSRF cookie', method: 'GET', url: '/sanctum/csrf-cookie', origin: SPA, expect: withCredentials(SPA) },
      { name: 'stateful origin, preflight of an API write', method: 'OPTIONS', url: '/api/user', origin: SPA, expect: withCredentials(SPA), requestHeaders: 'content-type,x-xsrf-token' },
      { name: 'stateful origin, preflight of the JSON login', method: 'OPTIONS', url: '/login', origin: SPA, expect: withCredentials(SPA), requestHeaders: 'content-type,x-xsrf-token' },
      { name: 'stateful origin, preflight of the JSON logout', method: 'OPTIONS', url: '/logout', origin: SPA, expect: withCredentials(SPA), requestHeaders: 'x-xsrf-token' },
      { name: 'stateful origin, a page', method: 'GET', url: '/dashboard', origin: SPA, expect: none },
      { name: 'stateful origin, the document', method: 'GET', url: '/api/openapi.json', origin: SPA, expect: withCredentials(SPA) },
      { name: 'third-party origin, API read', method: 'GET', url: '/api/posts', origin: PARTNER, expect: withoutCredentials(PARTNER) },
      { name: 'third-party origin, preflight with Authorization', method: 'OPTIONS', url: '/api/user', origin: PARTNER, expect: withoutCredentials(PARTNER), requestHeaders: 'authorization' },
      { name: 'third-party origin, CSRF cookie', method: 'GET', url: '/sanctum/csrf-cookie', origin: PARTNER, expect: none },
      { name: 'third-party origin, preflight of the login', method: 'OPTIONS', url: '/login', origin: PARTNER, expect: none, requestHeaders: 'content-type' },
      { name: 'unknown origin, API read', method: 'GET', url: '/api/posts', origin: 'http://evil.example', expect: none },
      { name: 'unknown origin, preflight', method: 'OPTIONS', url: '/api/user', origin: 'http://evil.example', expect: none, requestHeaders: 'authorization' },
      { name: 'third-party origin with another scheme', method: 'GET', url: '/api/posts', origin: 'http://partner.example', expect: none },
      { name: 'stateful host on another port', method: 'GET', url: '/api/posts', origin: 'http://localhost:5174', expect: none },
    ];
    for (const { name, method, url, origin, expect, requestHeaders } of cases) {
      it(`${expect.allowOrigin === undefined ? 'sends no CORS headers' : expect.credentials ? 'allows with credentials' : 'allows without credentials'}: ${name}`, async () => {
        const headers: Record<string, string> = { origin };
        if (method === 'OPTIONS') {
          headers['access-control-request-method'] = url === '/api/user' ? 'PUT' : 'POST';
          if (requestHeaders !== undefined) headers['access-control-request-headers'] = requestHeaders;
        }
        const response = await t.app.inject({ method, url, headers });
        assert.equal(response.headers['access-control-allow-origin'], expect.allowOrigin);
        assert.equal(response.headers['access-control-allow-credentials'], expect.credentials ? 'true' : undefined);
        if (expect.allowOrigin === undefined) {
          const corsHeaders = Object.keys(response.headers).filter((h) => h.startsWith('access-control-'));
          assert.deepEqual(corsHeaders, []);
          if (method === 'OPTIONS') assert.notEqual(response.statusCode, 204);
        } else if (method === 'OPTIONS') {
          assert.equal(response.statusCode, 204);
          assert.match(String(response.headers['access-control-allow-methods']), /\bPUT\b/);
          const allowed = String(response.headers['access-control-allow-headers']).toLowerCase();
          for (const header of (requestHeaders ?? '').split(',').filter(Boolean)) assert.ok(allowed.includes(header), `${header} in ${allowed}`);
          // Third parties carry tokens, not cookies: the XSRF header is none of their business.
          assert.equal(allowed.includes('x-xsrf-token'), expect.credentials);
        }
        assert.match(String(response.headers.vary), /Origin/i);
      });
    }

    it('lets a listed SPA read a 401 (CORS headers on errors too)', async () => {
      const response = await t.app.inject({ url: '/api/user', headers: { origin: SPA } });
      assert.equal(response.statusCode, 401);
      assert.equal(response.headers['access-control-allow-origin'], SPA);
      assert.equal(response.headers['access-control-allow-credentials'], 'true');
    });

    it('allows any origin without credentials when CORS_ALLOWED_ORIGINS is *', async () => {
      const open = await buildStatefulApp({ SANCTUM_STATEFUL_DOMAINS: 'localhost:5173', CORS_ALLOWED_ORIGINS: '*' });
      try {
        const thirdParty = await open.app.inject({ url: '/api/posts', headers: { origin: 'https://anyone.example' } });
        assert.equal(thirdParty.headers['access-control-allow-origin'], '*');
        assert.equal(thirdParty.headers['access-control-allow-credentials'], undefined);
        const spa = await open.app.inject({ url: '/api/posts', headers: { origin: SPA } });
        assert.equal(spa.headers['access-control-allow-origin'], SPA);
        assert.equal(spa.headers['access-control-allow-credentials'], 'true');
      } finally {
        await open.close();
      }
    });
  });
});
