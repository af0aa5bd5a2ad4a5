// Behind a TLS-terminating proxy that is not in TRUSTED_PROXIES, every request reaches the
// service as http while APP_URL is https: the session cookie and a guest's CSRF cookie are
// Secure, so they are never set, and every form answers 419. The start says so in one warning line naming TRUSTED_PROXIES (the real
// process), and in development the 419 page says why; production pages never explain the deployment.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { t } from '../../src/modules/i18n/translator.js';
import { GUEST_CSRF_COOKIE } from '../../src/plugins/session.js';
import { buildTestApp, type TestApp } from '../helpers.js';
import { createSharedDatabase, startServerProcess, type SharedDatabase } from '../load/server-process.js';
import { WebClient, decodeEntities } from '../support/client.js';
import { mainOf } from '../web/support.js';

const APP_URL = 'https://tessera.example.test';

type LogLine = { level?: number; msg?: string };

function warnings(output: string): LogLine[] {
  return output
    .split('\n')
    .filter((line) => line.startsWith('{'))
    .map((line) => JSON.parse(line) as LogLine)
    .filter((line) => line.level === 40);
}

/** The Set-Cookie of GET /login for the cookie its form's token needs (a guest's CSRF secret), or null. */
async function sessionCookieOf(url: string, headers: Record<string, string> = {}): Promise<string | null> {
  const response = await fetch(`${url}/login`, { headers });
  await response.body?.cancel();
  // Production over https names it __Host-tessera_csrf (test/web/guest-forms.test.ts).
  return response.headers.getSetCookie().find((cookie) => cookie.startsWith(`${GUEST_CSRF_COOKIE}=`) || cookie.startsWith(`__Host-${GUEST_CSRF_COOKIE}=`)) ?? null;
}

describe('APP_URL https behind a proxy, as the real process', () => {
  let database: SharedDatabase;

  before(async () => {
    database = await createSharedDatabase('sqlite');
  });
  after(async () => {
    await database?.drop();
  });

  it('warns once at start, naming TRUSTED_PROXIES, when it is empty; and sets no cookie over http', async () => {
    // MAIL_MAILER=smtp: the log mailer has a production warning of its own (test/faults/mail-log-warning.test.ts).
    const server = await startServerProcess({ NODE_ENV: 'production', APP_URL, MAIL_MAILER: 'smtp', DATABASE_URL: database.url, DATA_DIR: database.dataDir });
    try {
      assert.equal(await sessionCookieOf(server.url), null);
      // A client's X-Forwarded-Proto is not believed: no proxy is trusted.
      assert.equal(await sessionCookieOf(server.url, { 'x-forwarded-proto': 'https' }), null);
    } finally {
      assert.equal(await server.stop(), 0);
    }
    const lines = warnings(server.output());
    assert.equal(lines.length, 1, server.output());
    assert.match(lines[0]?.msg ?? '', /^APP_URL is https but TRUSTED_PROXIES is empty: .*Set TRUSTED_PROXIES to the proxy's address\.$/);
  });

  it('does not warn when the proxy is trusted, and then sets the Secure cookie on what it forwards as https', async () => {
    const server = await startServerProcess({ NODE_ENV: 'production', APP_URL, TRUSTED_PROXIES: 'loopback', MAIL_MAILER: 'smtp', DATABASE_URL: database.url, DATA_DIR: database.dataDir });
    try {
      const cookie = await sessionCookieOf(server.url, { 'x-forwarded-proto': 'https' });
      assert.match(cookie ?? '', /; Secure/);
      assert.match(cookie ?? '', /^__Host-/);
    } finally {
      assert.equal(await server.stop(), 0);
    }
    assert.deepEqual(warnings(server.output()), []);
  });
});

describe('the 419 page when the Secure cookie could not be set', () => {
  const apps: TestApp[] = [];
  const build = async (env: Record<string, string>) => {
    const app = await buildTestApp(env);
    apps.push(app);
    return app;
  };
  after(async () => {
    for (const app of apps) await app.close();
  });

  /** GET /login then POST it, as a browser that reaches the service over http. */
  async function loginOverHttp(app: TestApp, headers: Record<string, string> = {}) {
    const client = new WebClient(app.app, { headers });
    await client.get('/login');
    const response = await client.post('/login', { email: 'ada@example.com', password: 'whatever-password' });
    assert.equal(response.statusCode, 419);
    return decodeEntities(mainOf(response.body));
  }

  it('explains APP_URL, http and TRUSTED_PROXIES in development, in English and French', async () => {
    const app = await build({ NODE_ENV: 'development', APP_URL });
    assert.ok((await loginOverHttp(app)).includes(t('en', 'errors.hint.419_insecure')));
    const french = await loginOverHttp(app, { 'accept-language': 'fr' });
    assert.ok(french.includes(t('fr', 'errors.hint.419_insecure')));
    assert.match(french, /TRUSTED_PROXIES/);
  });

  it('gives no such hint in production', async () => {
    const app = await build({ NODE_ENV: 'production', APP_URL });
    const page = await loginOverHttp(app);
    assert.match(page, /Page expired/);
    assert.doesNotMatch(page, /TRUSTED_PROXIES|APP_URL/);
  });

  it('gives no such hint in development when the request came over https', async () => {
    const app = await build({ NODE_ENV: 'development', APP_URL, TRUSTED_PROXIES: 'loopback' });
    const client = new WebClient(app.app, { headers: { 'x-forwarded-proto': 'https' } });
    await client.get('/login');
    const response = await client.post('/login', { email: 'ada@example.com', password: 'whatever-password' }, { token: 'forged-token' });
    assert.equal(response.statusCode, 419);
    assert.doesNotMatch(decodeEntities(mainOf(response.body)), /TRUSTED_PROXIES/);
  });
});
