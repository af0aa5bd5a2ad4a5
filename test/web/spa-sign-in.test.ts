// A first-party SPA (an origin listed in SANCTUM_STATEFUL_DOMAINS) finishes every step of a
// session sign-in across origins: the preflight of each step it calls is answered with CORS and
// credentials, and each step answers JSON the page can read: the two-factor code after the
// password, and the password confirmation before a sensitive action (and its status). Any other
// origin gets no CORS header on these steps.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { FastifyInstance, LightMyRequestResponse } from 'fastify';
import { CookieJar, buildStatefulApp } from '../api/stateful-support.js';
import { buildTestApp, createUser, type TestApp } from '../helpers.js';
import { codeAt, enableTwoFactor } from '../support/two-factor-sign-in.js';

const SPA = 'http://localhost:5173';
const EVIL = 'http://evil.example';

describe('a first-party SPA across origins, step by step', () => {
  let t: TestApp;

  before(async () => {
    t = await buildStatefulApp({ SANCTUM_STATEFUL_DOMAINS: 'localhost:5173' });
  });
  after(() => t.close());

  const start = async () => new CookieJar().take(await t.app.inject({ url: '/sanctum/csrf-cookie', headers: { origin: SPA } }));
  const xsrf = (jar: CookieJar) => decodeURIComponent(jar.get('XSRF-TOKEN') ?? '');
  const spaHeaders = (jar: CookieJar, withXsrf = true) => ({
    origin: SPA,
    accept: 'application/json',
    cookie: jar.header(),
    ...(withXsrf ? { 'x-xsrf-token': xsrf(jar) } : {}),
  });
  const post = (url: string, headers: Record<string, string>, payload: Record<string, unknown>) => t.app.inject({ method: 'POST', url, headers, payload });

  function assertSpaCors(response: LightMyRequestResponse): void {
    assert.equal(response.headers['access-control-allow-origin'], SPA, `${response.statusCode} ${response.body}`);
    assert.equal(response.headers['access-control-allow-credentials'], 'true');
  }

  const preflight = (url: string, origin: string, method = 'POST') =>
    t.app.inject({ method: 'OPTIONS', url, headers: { origin, 'access-control-request-method': method, 'access-control-request-headers': 'content-type,x-xsrf-token' } });

  const steps = [
    { url: '/two-factor-challenge', method: 'POST' },
    { url: '/user/confirm-password', method: 'POST' },
    { url: '/user/confirmed-password-status', method: 'GET' },
    { url: '/login', method: 'POST' },
    { url: '/logout', method: 'POST' },
  ];
  for (const { url, method } of steps) {
    it(`answers the preflight of ${method} ${url} from the listed origin: 204, credentials, the XSRF header allowed`, async () => {
      const response = await preflight(url, SPA, method);
      assert.equal(response.statusCode, 204, response.body);
      assertSpaCors(response);
      assert.match(String(response.headers['access-control-allow-methods']), new RegExp(`\\b${method}\\b`));
      const allowed = String(response.headers['access-control-allow-headers']).toLowerCase();
      assert.ok(allowed.includes('x-xsrf-token') && allowed.includes('content-type'), allowed);
    });

    it(`sends no CORS header to an unlisted origin's preflight of ${method} ${url}`, async () => {
      const response = await preflight(url, EVIL, method);
      assert.notEqual(response.statusCode, 204);
      assert.deepEqual(Object.keys(response.headers).filter((h) => h.startsWith('access-control-')), []);
    });
  }

  it('finishes a password + code sign-in: {"two_factor":true}, 422 for a wrong code, 419 without the XSRF header, 204 for the right code', async () => {
    const user = await createUser(t.app);
    const { secret } = await enableTwoFactor(t.app, user.id);
    const jar = await start();
    const password = await post('/login', spaHeaders(jar), { email: user.email, password: user.plainPassword });
    assert.equal(password.statusCode, 200, password.body);
    assert.deepEqual(password.json(), { two_factor: true });
    assertSpaCors(password);
    jar.take(password);

    const wrong = await post('/two-factor-challenge', spaHeaders(jar), { code: '000000' });
    assert.equal(wrong.statusCode, 422);
    assertSpaCors(wrong);
    assert.deepEqual(Object.keys(wrong.json() as object).sort(), ['errors', 'message']);
    assert.ok((wrong.json() as { errors: Record<string, string[]> }).errors.code);

    const forged = await post('/two-factor-challenge', spaHeaders(jar, false), { code: await codeAt(secret) });
    assert.equal(forged.statusCode, 419);
    assertSpaCors(forged);

    const code = await post('/two-factor-challenge', spaHeaders(jar), { code: await codeAt(secret) });
    assert.equal(code.statusCode, 204, code.body);
    assertSpaCors(code);
    jar.take(code);
    const me = await t.app.inject({ url: '/api/user', headers: { origin: SPA, cookie: jar.header() } });
    assert.equal((me.json() as { id: number }).id, user.id);
  });

  it('confirms the password: status false, 422 for a wrong one, 419 without the XSRF header, 204, then status true', async () => {
    const user = await createUser(t.app);
    const jar = await start();
    const login = await post('/login', spaHeaders(jar), { email: user.email, password: user.plainPassword });
    assert.equal(login.statusCode, 204, login.body);
    jar.take(login);

    const status = async () => {
      const response = await t.app.inject({ url: '/user/confirmed-password-status', headers: spaHeaders(jar) });
      assert.equal(response.statusCode, 200, response.body);
      assertSpaCors(response);
      assert.equal(response.headers['cache-control'], 'no-store');
      return (response.json() as { confirmed: boolean }).confirmed;
    };
    assert.equal(await status(), false);

    const wrong = await post('/user/confirm-password', spaHeaders(jar), { password: 'not the password' });
    assert.equal(wrong.statusCode, 422);
    assertSpaCors(wrong);
    assert.ok((wrong.json() as { errors: Record<string, string[]> }).errors.password);

    const forged = await post('/user/confirm-password', spaHeaders(jar, false), { password: user.plainPassword });
    assert.equal(forged.statusCode, 419);
    assertSpaCors(forged);
    assert.equal(await status(), false);

    const right = await post('/user/confirm-password', spaHeaders(jar), { password: user.plainPassword });
    assert.equal(right.statusCode, 204, right.body);
    assertSpaCors(right);
    assert.equal(await status(), true);
  });

  it('answers the status of a visitor who is not signed in with 401, CORS-readable', async () => {
    const response = await t.app.inject({ url: '/user/confirmed-password-status', headers: { origin: SPA, accept: 'application/json' } });
    assert.equal(response.statusCode, 401);
    assertSpaCors(response);
  });

  it('sends no CORS header on the real calls of an unlisted origin', async () => {
    const user = await createUser(t.app);
    await enableTwoFactor(t.app, user.id);
    const jar = await start();
    const password = await post('/login', { ...spaHeaders(jar), origin: EVIL }, { email: user.email, password: user.plainPassword });
    jar.take(password);
    for (const response of [password, await post('/two-factor-challenge', { ...spaHeaders(jar), origin: EVIL }, { code: '000000' })]) {
      assert.deepEqual(Object.keys(response.headers).filter((h) => h.startsWith('access-control-')), [], response.body);
    }
  });

  it('keeps CORS off the pages that are not SPA steps (the dashboard, the security page)', async () => {
    for (const url of ['/dashboard', '/security']) {
      const response = await preflight(url, SPA, 'GET');
      assert.deepEqual(Object.keys(response.headers).filter((h) => h.startsWith('access-control-')), [], url);
    }
  });
});

describe('config.spa', () => {
  it('stops the start when a route with a parameter in its path declares it (a preflight is matched by path)', async () => {
    const withParameter = async (app: FastifyInstance) => {
      app.post('/spa-step/:id', { config: { auth: 'public', spa: true } }, async () => 'never');
    };
    await assert.rejects(buildTestApp({}, { browserRoutes: withParameter }), /config\.spa needs a static path/);
  });
});
