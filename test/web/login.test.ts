// GET/POST /login: the spec's rules (auth.failed on `email`, no redirect; 303 to the intended
// page or /dashboard), validation, localization and session fixation.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { FastifyRequest } from 'fastify';
import { takeIntended } from '../../src/http/shared/sign-in.js';
import { buildTestApp, createUser, type TestApp } from '../helpers.js';
import { WebClient, fieldError, fieldValue } from '../support/client.js';
import { isLoggedIn, login, sessionIdOf, sessionRow } from './support.js';

const FAILED = 'These credentials do not match our records.';

describe('login page and action', () => {
  let t: TestApp;
  let user: Awaited<ReturnType<typeof createUser>>;

  before(async () => {
    t = await buildTestApp();
    user = await createUser(t.app, { name: 'Grace Hopper', email: 'grace@example.com', password: 'cobol-forever-1959' });
  });
  after(() => t.close());

  it('shows a form with labelled fields, autocomplete hints and a CSRF token', async () => {
    const client = new WebClient(t.app);
    const response = await client.get('/login');
    assert.equal(response.statusCode, 200);
    assert.match(response.body, /<label for="field-email">Email<\/label>/);
    assert.match(response.body, /id="field-email" name="email" type="email"[^>]*autocomplete="username"/);
    assert.match(response.body, /id="field-password" name="password" type="password"[^>]*autocomplete="current-password"/);
    assert.match(response.body, /<label for="field-remember">Remember me<\/label>/);
    assert.ok(client.csrf, 'the form carries _token');
  });

  it('answers a wrong password with the login page again: 422, auth.failed on email, the typed email kept', async () => {
    const client = new WebClient(t.app);
    await client.get('/login');
    const response = await client.post('/login', { email: 'grace@example.com', password: 'not-her-password' });
    assert.equal(response.statusCode, 422);
    assert.equal(response.headers.location, undefined);
    assert.equal(fieldError(response.body, 'email'), FAILED);
    assert.equal(fieldValue(response.body, 'email'), 'grace@example.com');
    assert.ok(!response.body.includes('not-her-password'), 'the password is never echoed');
    assert.equal(await isLoggedIn(client), false);
  });

  it('answers an unknown email exactly like a wrong password (no enumeration)', async () => {
    const client = new WebClient(t.app);
    await client.get('/login');
    const response = await client.post('/login', { email: 'nobody@example.com', password: 'whatever-password' });
    assert.equal(response.statusCode, 422);
    assert.equal(fieldError(response.body, 'email'), FAILED);
  });

  it('says auth.failed in French to a French visitor', async () => {
    const client = new WebClient(t.app, { headers: { 'accept-language': 'fr-FR,fr;q=0.9,en;q=0.5' } });
    await client.get('/login');
    const response = await client.post('/login', { email: 'grace@example.com', password: 'not-her-password' });
    assert.equal(response.statusCode, 422);
    assert.equal(fieldError(response.body, 'email'), 'Ces identifiants ne correspondent pas à nos enregistrements.');
    assert.match(response.body, /<html lang="fr">/);
  });

  const invalid: { name: string; form: Record<string, string>; field: string; message: string }[] = [
    { name: 'a missing email', form: { password: 'secret-123' }, field: 'email', message: 'The email field is required.' },
    { name: 'an empty email', form: { email: '', password: 'secret-123' }, field: 'email', message: 'The email field is required.' },
    { name: 'a malformed email', form: { email: 'grace', password: 'secret-123' }, field: 'email', message: 'The email field must be a valid email address.' },
    { name: 'a missing password', form: { email: 'grace@example.com' }, field: 'password', message: 'The password field is required.' },
    { name: 'a password under 6 characters', form: { email: 'grace@example.com', password: 'abcde' }, field: 'password', message: 'The password field must be at least 6 characters.' },
    { name: 'a malformed email and a short password (email)', form: { email: 'grace@', password: 'abc' }, field: 'email', message: 'The email field must be a valid email address.' },
    { name: 'a malformed email and a short password (password)', form: { email: 'grace@', password: 'abc' }, field: 'password', message: 'The password field must be at least 6 characters.' },
  ];
  for (const c of invalid) {
    it(`refuses ${c.name} with 422 and the message on ${c.field}`, async () => {
      const client = new WebClient(t.app);
      await client.get('/login');
      const response = await client.post('/login', c.form);
      assert.equal(response.statusCode, 422);
      assert.equal(fieldError(response.body, c.field), c.message);
    });
  }

  it('logs in with the right password: 303 to /dashboard', async () => {
    const client = new WebClient(t.app);
    await client.get('/login');
    const response = await client.post('/login', { email: 'grace@example.com', password: 'cobol-forever-1959' });
    assert.equal(response.statusCode, 303);
    assert.equal(response.headers.location, '/dashboard');
    const dashboard = await client.follow(response);
    assert.equal(dashboard.statusCode, 200);
    assert.match(dashboard.body, /Grace Hopper/);
  });

  it('accepts the email in any case', async () => {
    const client = new WebClient(t.app);
    await login(client, 'GRACE@Example.COM', 'cobol-forever-1959');
    assert.equal(await isLoggedIn(client), true);
  });

  it('gives the session a new id at login, and the id from before login is dead', async () => {
    const client = new WebClient(t.app);
    // A session begun before login: the page first asked for is kept in it.
    await client.get('/profile');
    await client.get('/login');
    const before = sessionIdOf(client);
    assert.ok(before, 'a session was begun before login');
    assert.ok(await sessionRow(t.db, before));
    await client.post('/login', { email: user.email, password: user.plainPassword });
    const afterLogin = sessionIdOf(client);
    assert.ok(afterLogin);
    assert.notEqual(afterLogin, before);
    assert.equal(await sessionRow(t.db, before), undefined);
    assert.equal((await sessionRow(t.db, afterLogin))?.user_id, user.id);
  });

  it('sends the user back to the page first asked for', async () => {
    const client = new WebClient(t.app);
    const guarded = await client.get('/profile');
    assert.equal(guarded.statusCode, 302);
    assert.equal(guarded.headers.location, '/login');
    await client.follow(guarded);
    const response = await client.post('/login', { email: user.email, password: user.plainPassword });
    assert.equal(response.statusCode, 303);
    assert.equal(response.headers.location, '/profile');
  });

  it('sends a logged-in user from the guest pages to /dashboard', async () => {
    const client = new WebClient(t.app);
    await login(client, user.email, user.plainPassword);
    for (const path of ['/login', '/register', '/forgot-password', '/reset-password/some-token']) {
      const response = await client.get(path);
      assert.equal(response.statusCode, 302, path);
      assert.equal(response.headers.location, '/dashboard', path);
    }
  });

  it('sends a visitor from /dashboard to /login', async () => {
    const response = await t.app.inject({ url: '/dashboard' });
    assert.equal(response.statusCode, 302);
    assert.equal(response.headers.location, '/login');
  });
});

describe('takeIntended', () => {
  const request = (intended: unknown) => ({ session: { intended } }) as unknown as FastifyRequest;
  const cases: { intended: unknown; expected: string | null }[] = [
    { intended: '/profile?tab=password', expected: '/profile?tab=password' },
    { intended: undefined, expected: null },
    { intended: '//evil.example/phish', expected: null },
    { intended: '/\\evil.example', expected: null },
    { intended: 'https://evil.example/', expected: null },
    { intended: '/admin/users', expected: null },
  ];
  for (const c of cases) {
    it(`turns an intended ${JSON.stringify(c.intended)} into ${JSON.stringify(c.expected)}`, () => {
      assert.equal(takeIntended(request(c.intended)), c.expected);
    });
  }
});
