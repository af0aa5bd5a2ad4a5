// The `__Host-` cookie prefix: in production over https the session and remember-me cookies are
// named `__Host-tessera_session` / `__Host-tessera_remember` and carry what the prefix demands
// (Secure, Path=/, no Domain), so a sibling subdomain cannot plant or overwrite them. With
// SESSION_DOMAIN (an SPA on a sibling subdomain) they keep their plain names and carry the Domain;
// over http in development nothing changes. The XSRF-TOKEN cookie keeps its name everywhere.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { LightMyRequestResponse } from 'fastify';
import { buildApp } from '../../src/app.js';
import { REMEMBER_COOKIE } from '../../src/http/web/remember.js';
import { SESSION_COOKIE } from '../../src/plugins/session.js';
import { createTestDatabase, createUser, testConfig } from '../helpers.js';
import { WebClient } from '../support/client.js';
import { isLoggedIn } from './support.js';

const HOST_SESSION = `__Host-${SESSION_COOKIE}`;
const HOST_REMEMBER = `__Host-${REMEMBER_COOKIE}`;

/** Runs `body` against an app built with `env`; over https the requests arrive encrypted, as behind TLS. */
async function withApp(env: Record<string, string>, body: (app: Awaited<ReturnType<typeof buildApp>>) => Promise<void>): Promise<void> {
  const database = await createTestDatabase();
  const app = await buildApp(testConfig(env), { db: database.db });
  if (env.APP_URL?.startsWith('https:')) {
    app.addHook('onRequest', async (request) => {
      (request.raw.socket as { encrypted?: boolean }).encrypted = true;
    });
  }
  await app.ready();
  try {
    await body(app);
  } finally {
    await app.close();
    await database.drop();
  }
}

/** The raw Set-Cookie header for `name` (attributes as the browser sees them). */
function rawSetCookie(response: LightMyRequestResponse, name: string): string | undefined {
  const header = response.headers['set-cookie'];
  const all = header === undefined ? [] : Array.isArray(header) ? header : [header];
  return all.find((line) => line.startsWith(`${name}=`));
}

const attributes = (line: string) => line.split(';').slice(1).map((part) => part.trim().toLowerCase());

/** Logs in with "remember me" through the form; returns the login's response. */
async function rememberedLogin(app: Awaited<ReturnType<typeof buildApp>>, client: WebClient): Promise<LightMyRequestResponse> {
  const user = await createUser(app, { password: 'host-prefix-password' });
  await client.get('/login');
  const response = await client.post('/login', { email: user.email, password: 'host-prefix-password', remember: '1' });
  assert.equal(response.statusCode, 303, response.body);
  return response;
}

describe('__Host- cookies', () => {
  it('names the session and remember cookies __Host- in production over https, Secure, Path=/ and without Domain', async () => {
    await withApp({ NODE_ENV: 'production', APP_URL: 'https://tessera.example' }, async (app) => {
      const client = new WebClient(app);
      const response = await rememberedLogin(app, client);
      for (const name of [HOST_SESSION, HOST_REMEMBER]) {
        const line = rawSetCookie(response, name);
        assert.ok(line, `${name} is set`);
        const attrs = attributes(line);
        assert.ok(attrs.includes('secure'), `${name} is Secure`);
        assert.ok(attrs.includes('path=/'), `${name} has Path=/`);
        assert.ok(!attrs.some((attr) => attr.startsWith('domain=')), `${name} has no Domain`);
        assert.ok(attrs.includes('httponly'), `${name} is HttpOnly`);
      }
      assert.equal(rawSetCookie(response, SESSION_COOKIE), undefined, 'no plain-named session cookie');
      assert.equal(rawSetCookie(response, REMEMBER_COOKIE), undefined, 'no plain-named remember cookie');
    });
  });

  it('keeps the user logged in under the __Host- names, by session and by remember-me, and logs out', async () => {
    await withApp({ NODE_ENV: 'production', APP_URL: 'https://tessera.example' }, async (app) => {
      const client = new WebClient(app);
      await rememberedLogin(app, client);
      assert.ok(await isLoggedIn(client), 'the __Host- session cookie is read');
      // A plain-named copy is not the session cookie there.
      const plain = new WebClient(app);
      plain.cookies.set(SESSION_COOKIE, client.cookies.get(HOST_SESSION)!);
      assert.equal(await isLoggedIn(plain), false);
      // The browser was closed: the __Host- remember cookie logs it back in.
      client.cookies.delete(HOST_SESSION);
      assert.ok(await isLoggedIn(client), 'the __Host- remember cookie is read');
      assert.ok(client.cookies.has(HOST_SESSION), 'a new session under the __Host- name');
      // Logging out clears both, with the attributes the prefix needs for the browser to accept it.
      await client.get('/dashboard');
      const out = await client.post('/logout');
      assert.equal(out.statusCode, 303);
      for (const name of [HOST_SESSION, HOST_REMEMBER]) {
        const line = rawSetCookie(out, name);
        assert.ok(line, `${name} is cleared`);
        assert.ok(attributes(line).includes('secure'), `${name}'s clearing is Secure`);
      }
      assert.equal(await isLoggedIn(client), false);
    });
  });

  it('keeps the plain names and sets the Domain with SESSION_DOMAIN', async () => {
    await withApp({ NODE_ENV: 'production', APP_URL: 'https://api.tessera.example', SESSION_DOMAIN: '.tessera.example' }, async (app) => {
      const client = new WebClient(app);
      const response = await rememberedLogin(app, client);
      assert.equal(rawSetCookie(response, HOST_SESSION), undefined);
      for (const name of [SESSION_COOKIE, REMEMBER_COOKIE]) {
        const line = rawSetCookie(response, name);
        assert.ok(line, `${name} is set`);
        assert.ok(attributes(line).includes('domain=.tessera.example'), `${name} carries the Domain`);
        assert.ok(attributes(line).includes('secure'));
      }
      assert.ok(await isLoggedIn(client));
    });
  });

  it('keeps the plain names over http in development', async () => {
    await withApp({ NODE_ENV: 'development', APP_URL: 'http://localhost:3000' }, async (app) => {
      const client = new WebClient(app);
      const response = await rememberedLogin(app, client);
      for (const name of [SESSION_COOKIE, REMEMBER_COOKIE]) {
        const line = rawSetCookie(response, name);
        assert.ok(line, `${name} is set`);
        assert.ok(!attributes(line).includes('secure'));
        assert.ok(!attributes(line).some((attr) => attr.startsWith('domain=')));
      }
      assert.equal(rawSetCookie(response, HOST_SESSION), undefined);
    });
  });

  it('keeps the XSRF-TOKEN name for SPAs in production over https', async () => {
    await withApp({ NODE_ENV: 'production', APP_URL: 'https://tessera.example' }, async (app) => {
      const response = await app.inject({ method: 'GET', url: '/sanctum/csrf-cookie' });
      assert.ok(rawSetCookie(response, 'XSRF-TOKEN'), 'XSRF-TOKEN keeps its name');
      assert.equal(rawSetCookie(response, '__Host-XSRF-TOKEN'), undefined);
    });
  });
});
