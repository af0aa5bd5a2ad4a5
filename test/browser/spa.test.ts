// A real first-party SPA in headless Chromium: a page served from another loopback port (listed
// in SANCTUM_STATEFUL_DOMAINS) fetches the CSRF cookie, logs in with JSON (with the two-factor
// code when it is on), confirms the password, reads /api/user on the session cookie, and logs out. A page on an unlisted port, with the same cookie in the browser,
// gets 401. API and SPA are both on "localhost" (same site, other ports), as in development.
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import type { FastifyInstance } from 'fastify';
import type { Browser, Page } from 'playwright-core';
import { buildApp } from '../../src/app.js';
import { createTestDatabase, createUser, testConfig, type TestDatabase } from '../helpers.js';
import { launchBrowser, listenWithAppUrl, skipWithoutChromium } from '../support/browser.js';
import { codeAt, enableTwoFactor } from '../support/two-factor-sign-in.js';

const SPA_HTML = `<!doctype html>
<html lang="en">
<head><meta charset="utf-8"><title>Tessera SPA</title><script src="/spa.js" defer></script></head>
<body><main><h1>SPA on another port</h1><ol id="log"></ol></main></body>
</html>`;

// The SPA: what axios does for a Laravel Sanctum SPA, with fetch. The API's address comes from
// the page's query string (?api=...).
const SPA_JS = `
const API = new URLSearchParams(location.search).get('api');
function xsrf() {
  const cookie = document.cookie.split('; ').find((c) => c.startsWith('XSRF-TOKEN='));
  return cookie === undefined ? null : decodeURIComponent(cookie.slice('XSRF-TOKEN='.length));
}
async function call(method, path, body) {
  const headers = { Accept: 'application/json' };
  if (body !== undefined) headers['Content-Type'] = 'application/json';
  const token = xsrf();
  if (token !== null && method !== 'GET') headers['X-XSRF-TOKEN'] = token;
  let result;
  try {
    const response = await fetch(API + path, { method, headers, credentials: 'include', body: body === undefined ? undefined : JSON.stringify(body) });
    const text = await response.text();
    result = { status: response.status, body: text === '' ? null : JSON.parse(text) };
  } catch (error) {
    result = { status: 0, error: String(error) };
  }
  const item = document.createElement('li');
  item.textContent = method + ' ' + path + ' → ' + (result.status || result.error);
  document.getElementById('log').append(item);
  return result;
}
window.spa = {
  xsrf,
  csrf: () => call('GET', '/sanctum/csrf-cookie'),
  login: (email, password) => call('POST', '/login', { email, password }),
  challenge: (code) => call('POST', '/two-factor-challenge', { code }),
  confirmed: () => call('GET', '/user/confirmed-password-status'),
  confirm: (password) => call('POST', '/user/confirm-password', { password }),
  user: () => call('GET', '/api/user'),
  rename: (name) => call('PUT', '/api/user', { name }),
  logout: () => call('POST', '/logout'),
};
`;

type CallResult = { status: number; body?: unknown; error?: string };
type SpaApi = Record<'csrf' | 'user' | 'logout' | 'confirmed', () => Promise<CallResult>> & {
  login(email: string, password: string): Promise<CallResult>;
  challenge(code: string): Promise<CallResult>;
  confirm(password: string): Promise<CallResult>;
  rename(name: string): Promise<CallResult>;
  xsrf(): string | null;
};

/** The SPA's own server on a port the OS picks (no race with other tests for a "free" port). */
function serveSpa(): Promise<{ server: Server; port: number }> {
  const server = createServer((request, response) => {
    const path = (request.url ?? '/').split('?')[0];
    if (path === '/spa.js') response.writeHead(200, { 'content-type': 'text/javascript; charset=utf-8' }).end(SPA_JS);
    else if (path === '/') response.writeHead(200, { 'content-type': 'text/html; charset=utf-8' }).end(SPA_HTML);
    else response.writeHead(404).end();
  });
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve({ server, port: (server.address() as AddressInfo).port }));
  });
}

const closeServer = (server: Server | undefined) => new Promise<void>((resolve) => (server === undefined ? resolve() : server.close(() => resolve())));

describe('a first-party SPA in Chromium', { skip: skipWithoutChromium }, () => {
  let database: TestDatabase;
  let app: FastifyInstance;
  let browser: Browser;
  let spaServer: Server;
  let otherServer: Server;
  let apiUrl: string;
  let spaUrl: string;
  let otherUrl: string;
  let user: Awaited<ReturnType<typeof createUser>>;
  /** What the API saw of each /api/user call: the calling page, whether a session cookie came, the answer. */
  const seen: { origin: string | undefined; sessionCookie: boolean; status: number }[] = [];

  const call = <K extends keyof SpaApi>(page: Page, name: K, ...args: unknown[]) =>
    page.evaluate(
      ([method, list]) => ((globalThis as unknown as { spa: Record<string, (...a: unknown[]) => unknown> }).spa[method as string]!(...(list as unknown[])) as Promise<CallResult>),
      [name, args] as const,
    );

  before(async () => {
    const spa = await serveSpa();
    const other = await serveSpa();
    spaServer = spa.server;
    otherServer = other.server;
    spaUrl = `http://localhost:${spa.port}`;
    otherUrl = `http://localhost:${other.port}`;
    database = await createTestDatabase();
    // The API's address is in its configuration (APP_URL), so its port is chosen first: another
    // port is tried if that one was taken in the meantime.
    ({ app, url: apiUrl } = await listenWithAppUrl('localhost', async (url) => {
      const built = await buildApp(testConfig({ APP_URL: url, SANCTUM_STATEFUL_DOMAINS: `localhost:${spa.port}` }), { db: database.db });
      built.addHook('onResponse', async (request, reply) => {
        if (request.url === '/api/user' && request.method === 'GET') {
          seen.push({ origin: request.headers.origin, sessionCookie: /tessera_session=/.test(request.headers.cookie ?? ''), status: reply.statusCode });
        }
      });
      return built;
    }));
    user = await createUser(app, { name: 'Ada SPA', password: 'spa password 2026' });
    browser = await launchBrowser();
  });
  after(async () => {
    await browser?.close();
    await closeServer(spaServer);
    await closeServer(otherServer);
    await app?.close();
    await database?.drop();
  });

  it('runs csrf-cookie → login → GET /api/user → logout from a listed origin, then is 401', async () => {
    const context = await browser.newContext();
    const page = await context.newPage();
    await page.goto(`${spaUrl}/?api=${encodeURIComponent(apiUrl)}`);

    assert.equal((await call(page, 'csrf')).status, 204);
    assert.ok(await call(page, 'xsrf'), 'the SPA reads XSRF-TOKEN from document.cookie');
    const sessionCookie = (await context.cookies(apiUrl)).find((c) => c.name === 'tessera_session');
    assert.equal(sessionCookie?.httpOnly, true, 'the session cookie stays out of reach of scripts');

    const login = await call(page, 'login', user.email, 'spa password 2026');
    assert.equal(login.status, 204, JSON.stringify(login));

    const me = await call(page, 'user');
    assert.equal(me.status, 200, JSON.stringify(me));
    assert.deepEqual({ id: (me.body as { id: number }).id, email: (me.body as { email: string }).email }, { id: user.id, email: user.email });

    const rename = await call(page, 'rename', 'Ada Renamed');
    assert.equal(rename.status, 200, JSON.stringify(rename));

    assert.equal((await call(page, 'logout')).status, 204);
    const afterLogout = await call(page, 'user');
    assert.equal(afterLogout.status, 401);
    assert.deepEqual(afterLogout.body, { message: 'Unauthenticated.', errors: {} });
    await context.close();
  });

  it('signs in with password + two-factor code from a listed origin, then confirms the password', async () => {
    const twoFactorUser = await createUser(app, { name: 'Ada Two Factor', password: 'spa password 2026' });
    const { secret } = await enableTwoFactor(app, twoFactorUser.id);
    const context = await browser.newContext();
    const page = await context.newPage();
    await page.goto(`${spaUrl}/?api=${encodeURIComponent(apiUrl)}`);
    assert.equal((await call(page, 'csrf')).status, 204);

    const password = await call(page, 'login', twoFactorUser.email, 'spa password 2026');
    assert.deepEqual(password, { status: 200, body: { two_factor: true } });
    assert.equal((await call(page, 'user')).status, 401, 'not signed in before the code');
    const wrong = await call(page, 'challenge', '000000');
    assert.equal(wrong.status, 422, JSON.stringify(wrong));
    const code = await call(page, 'challenge', await codeAt(secret));
    assert.equal(code.status, 204, JSON.stringify(code));
    const me = await call(page, 'user');
    assert.equal((me.body as { id: number }).id, twoFactorUser.id);

    assert.deepEqual(await call(page, 'confirmed'), { status: 200, body: { confirmed: false } });
    assert.equal((await call(page, 'confirm', 'spa password 2026')).status, 204);
    assert.deepEqual(await call(page, 'confirmed'), { status: 200, body: { confirmed: true } });
    await context.close();
  });

  it('gives 401 to a page on an unlisted port, though the browser sends the logged-in session cookie', async () => {
    const context = await browser.newContext();
    const spa = await context.newPage();
    await spa.goto(`${spaUrl}/?api=${encodeURIComponent(apiUrl)}`);
    await call(spa, 'csrf');
    assert.equal((await call(spa, 'login', user.email, 'spa password 2026')).status, 204);
    assert.equal((await call(spa, 'user')).status, 200);

    const other = await context.newPage();
    await other.goto(`${otherUrl}/?api=${encodeURIComponent(apiUrl)}`);
    seen.length = 0;
    const attempt = await call(other, 'user');
    // The answer is a 401 without CORS headers: the page cannot even read it.
    assert.equal(attempt.status, 0);
    assert.match(String(attempt.error), /TypeError/);
    assert.deepEqual(seen, [{ origin: otherUrl, sessionCookie: true, status: 401 }]);

    // The listed SPA, in the same browser, is still logged in.
    assert.equal((await call(spa, 'user')).status, 200);
    await context.close();
  });
});
