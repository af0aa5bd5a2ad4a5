// The session actions for scripts (SPAs, fetch): the same routes answer 204 or the
// {message, errors} envelope instead of redirects and pages when the request asks for JSON.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { REMEMBER_COOKIE } from '../../src/http/web/remember.js';
import { createUser, type TestApp } from '../helpers.js';
import { WebClient } from '../support/client.js';
import { linkIn, type MailServer } from './mail-server.js';
import { appWithMail, closeAppWithMail, isLoggedIn } from './support.js';

describe('JSON answers of the session actions', () => {
  let mail: MailServer;
  let t: TestApp;
  let user: Awaited<ReturnType<typeof createUser>>;

  before(async () => {
    ({ t, mail } = await appWithMail());
    user = await createUser(t.app, { email: 'spa@example.com', password: 'spa-password-1' });
  });
  after(() => closeAppWithMail(t, mail));

  const client = async () => {
    const c = new WebClient(t.app);
    await c.get('/login');
    return c;
  };

  it('logs in with 204 (and remembers the device on remember: true)', async () => {
    const c = await client();
    const response = await c.postJson('/login', { email: user.email, password: 'spa-password-1', remember: true });
    assert.equal(response.statusCode, 204);
    assert.equal(response.body, '');
    assert.ok(c.cookies.has(REMEMBER_COOKIE));
    assert.equal(await isLoggedIn(c), true);
  });

  it('answers failed credentials with the 422 envelope', async () => {
    const c = await client();
    const response = await c.postJson('/login', { email: user.email, password: 'wrong-password' });
    assert.equal(response.statusCode, 422);
    assert.deepEqual(response.json(), { message: 'These credentials do not match our records.', errors: { email: ['These credentials do not match our records.'] } });
  });

  it('answers invalid fields with the 422 envelope, every field listed', async () => {
    const c = await client();
    const response = await c.postJson('/login', { email: 'nope', password: 'abc' });
    assert.equal(response.statusCode, 422);
    assert.deepEqual(response.json(), {
      message: 'The email field must be a valid email address.',
      errors: { email: ['The email field must be a valid email address.'], password: ['The password field must be at least 6 characters.'] },
    });
  });

  it('answers the throttle with the 429 envelope and Retry-After', async () => {
    const c = new WebClient(t.app, { remoteAddress: '10.20.30.40' });
    await c.get('/login');
    for (let i = 0; i < 5; i += 1) await c.postJson('/login', { email: user.email, password: 'wrong-password' });
    const response = await c.postJson('/login', { email: user.email, password: 'wrong-password' });
    assert.equal(response.statusCode, 429);
    const body = response.json() as { message: string; errors: { email: string[] } };
    assert.match(body.message, /^Too many login attempts\. Please try again in \d+ seconds\.$/);
    assert.deepEqual(body.errors.email, [body.message]);
    assert.ok(Number(response.headers['retry-after']) > 0);
  });

  it('registers with 204 and a logged-in session; refuses a taken email with 422', async () => {
    const c = await client();
    const ok = await c.postJson('/register', { name: 'Spa User', email: 'spa-new@example.com', password: 'spa-new-password', password_confirmation: 'spa-new-password' });
    assert.equal(ok.statusCode, 204);
    assert.equal(await isLoggedIn(c), true);
    const other = await client();
    const taken = await other.postJson('/register', { name: 'Spa User', email: 'spa@example.com', password: 'spa-new-password', password_confirmation: 'spa-new-password' });
    assert.equal(taken.statusCode, 422);
    assert.deepEqual((taken.json() as { errors: unknown }).errors, { email: ['The email has already been taken.'] });
  });

  it('answers a reset-link request with 204 whether or not the account exists, then resets with 204', async () => {
    const c = await client();
    assert.equal((await c.postJson('/forgot-password', { email: 'ghost@example.com' })).statusCode, 204);
    assert.equal((await c.postJson('/forgot-password', { email: user.email })).statusCode, 204);
    await t.app.services.mail.settled();
    const link = new URL(linkIn(mail.to(user.email)[0]!, 'http://localhost:3000/reset-password/'));
    const token = decodeURIComponent(link.pathname.split('/').pop()!);
    const bad = await c.postJson('/reset-password', { token: 'wrong', email: user.email, password: 'reset-password-1', password_confirmation: 'reset-password-1' });
    assert.equal(bad.statusCode, 422);
    assert.deepEqual(bad.json(), { message: 'This password reset token is invalid.', errors: { email: ['This password reset token is invalid.'] } });
    const good = await c.postJson('/reset-password', { token, email: user.email, password: 'reset-password-1', password_confirmation: 'reset-password-1' });
    assert.equal(good.statusCode, 204);
    assert.ok(await t.app.services.users.attempt(user.email, 'reset-password-1'));
  });

  it('accepts the X-XSRF-TOKEN an SPA echoes from GET /sanctum/csrf-cookie', async () => {
    const spa = await createUser(t.app, { email: 'spa-xsrf@example.com', password: 'spa-password-3' });
    const c = new WebClient(t.app);
    await c.get('/sanctum/csrf-cookie');
    const xsrf = c.cookies.get('XSRF-TOKEN');
    assert.ok(xsrf, 'the XSRF-TOKEN cookie is set');
    c.csrf = null;
    const response = await t.app.inject({
      method: 'POST',
      url: '/login',
      headers: { cookie: c.cookieHeader(), 'content-type': 'application/json', accept: 'application/json', 'x-xsrf-token': decodeURIComponent(xsrf) },
      payload: JSON.stringify({ email: spa.email, password: 'spa-password-3' }),
    });
    assert.equal(response.statusCode, 204);
  });

  it('logs out with 204', async () => {
    const other = await createUser(t.app, { email: 'spa-logout@example.com', password: 'spa-password-2' });
    const c = await client();
    await c.postJson('/login', { email: other.email, password: 'spa-password-2' });
    await c.get('/dashboard');
    const response = await c.postJson('/logout', {});
    assert.equal(response.statusCode, 204);
    assert.equal(await isLoggedIn(c), false);
  });
});
