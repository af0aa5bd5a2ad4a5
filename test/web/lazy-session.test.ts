// A visitor without a session cookie costs no session (plugins/session.ts, registerLazily): its
// session is made only when something reads `request.session`, and every page's own path (the web
// guard, the flash messages, the SPA's XSRF hook, the OpenID Connect page locals, a guest's form
// token) asks sessionStarted() first. Reading or writing the session still starts one, which is
// saved and sent as before.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { FastifyInstance } from 'fastify';
import fp from 'fastify-plugin';
import { GUEST_CSRF_COOKIE, SESSION_COOKIE, sessionStarted } from '../../src/plugins/session.js';
import { buildTestApp, createUser, type TestApp } from '../helpers.js';
import { WebClient } from '../support/client.js';
import { login } from './support.js';

/** Whether each answered request had its session made, by method and address. */
const started = new Map<string, boolean>();

// In the browser scope itself (fastify-plugin), before the site's routes: it sees every page.
const observe = fp(async (browser: FastifyInstance) => {
  browser.addHook('onResponse', async (request) => {
    started.set(`${request.method} ${request.url}`, sessionStarted(request));
  });
  browser.get('/test/reads-session', { config: { auth: 'public' } }, async (request) => request.session.intended ?? 'nothing');
  browser.get('/test/writes-session', { config: { auth: 'public' } }, async (request) => {
    request.session.intended = '/blog';
    return 'written';
  });
});

const cookieNames = (header: string | string[] | undefined) => [header ?? []].flat().map((line) => line.split('=')[0]);

describe('the session of a visitor without a session cookie', () => {
  let t: TestApp;
  before(async () => {
    t = await buildTestApp({}, { browserRoutes: observe });
  });
  after(() => t.close());

  for (const url of ['/', '/blog', '/login', '/register', '/forgot-password']) {
    it(`GET ${url}: is never made, and no session cookie is set`, async () => {
      const response = await t.app.inject({ url, headers: { accept: 'text/html' } });
      assert.equal(response.statusCode, 200);
      assert.equal(started.get(`GET ${url}`), false);
      assert.ok(!cookieNames(response.headers['set-cookie']).includes(SESSION_COOKIE));
    });
  }

  it("GET /login: the form's token comes from the guest cookie, and signing in with it works", async () => {
    const user = await createUser(t.app, { email: 'lazy-session@example.com' });
    const client = new WebClient(t.app);
    await login(client, user.email, user.plainPassword);
    assert.ok(client.cookies.get(GUEST_CSRF_COOKIE) !== undefined);
    assert.ok(client.cookies.get(SESSION_COOKIE) !== undefined);
    const dashboard = await client.get('/dashboard');
    assert.equal(dashboard.statusCode, 200);
    assert.equal(started.get('GET /dashboard'), true);
  });

  it('is made when a route reads it, and not saved while unchanged', async () => {
    const response = await t.app.inject({ url: '/test/reads-session' });
    assert.equal(response.body, 'nothing');
    assert.equal(started.get('GET /test/reads-session'), true);
    assert.ok(!cookieNames(response.headers['set-cookie']).includes(SESSION_COOKIE));
  });

  it('is made, saved and sent when a route writes it', async () => {
    const response = await t.app.inject({ url: '/test/writes-session' });
    assert.equal(response.body, 'written');
    const line = [response.headers['set-cookie'] ?? []].flat().find((cookie) => cookie.startsWith(`${SESSION_COOKIE}=`));
    assert.ok(line !== undefined);
    // The saved session is the visitor's: its next request carries it and reads what was written.
    const again = await t.app.inject({ url: '/test/reads-session', headers: { cookie: line.split(';')[0]! } });
    assert.equal(again.body, '/blog');
  });
});
