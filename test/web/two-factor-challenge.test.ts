// The code step of the site's sign-in when two-factor is on: POST /login only opens a pending
// challenge (nothing of the password, no signed-in user, a new session id), GET/POST
// /two-factor-challenge finishes it with a code (once, ±1 step) or a recovery code (once),
// throttled per account + IP, expiring after 5 minutes; the SPA gets Fortify's JSON answers.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { LightMyRequestResponse } from 'fastify';
import { REMEMBER_COOKIE } from '../../src/http/web/remember.js';
import { CookieJar, buildStatefulApp } from '../api/stateful-support.js';
import { buildTestApp, createUser, type TestApp } from '../helpers.js';
import { WebClient, fieldError, setCookie } from '../support/client.js';
import { codeAt, enableTwoFactor, type TwoFactorUser } from '../support/two-factor-sign-in.js';
import { isLoggedIn, mainOf, sessionIdOf, sessionRow } from './support.js';

const INVALID = 'The provided two-factor code is invalid.';
const EXPIRED = 'Your sign-in has expired. Please sign in again.';

type TestUser = Awaited<ReturnType<typeof createUser>> & TwoFactorUser;

describe('two-factor sign-in on the site', () => {
  let t: TestApp;

  before(async () => {
    t = await buildTestApp();
  });
  after(() => t.close());

  /** A new account with two-factor on. */
  async function twoFactorUser(): Promise<TestUser> {
    const user = await createUser(t.app);
    return { ...user, ...(await enableTwoFactor(t.app, user.id)) };
  }

  /** GET + POST /login with the right password; asserts the redirect to the code step. */
  async function passwordStep(client: WebClient, user: TestUser, extra: Record<string, string> = {}): Promise<LightMyRequestResponse> {
    await client.get('/login');
    const response = await client.post('/login', { email: user.email, password: user.plainPassword, ...extra });
    assert.equal(response.statusCode, 303, response.body);
    assert.equal(response.headers.location, '/two-factor-challenge');
    return response;
  }

  /** Opens the challenge page (for its CSRF token) and posts the form. */
  async function codeStep(client: WebClient, form: Record<string, string>): Promise<LightMyRequestResponse> {
    const page = await client.get(form.recovery_code === undefined ? '/two-factor-challenge' : '/two-factor-challenge?recovery=1');
    assert.equal(page.statusCode, 200, page.body);
    return client.post('/two-factor-challenge', form);
  }

  it('does not sign in with the password alone: 303 to the code step, /dashboard still closed', async () => {
    const user = await twoFactorUser();
    const client = new WebClient(t.app);
    await passwordStep(client, user);
    assert.equal(await isLoggedIn(client), false);
  });

  it('keeps nothing of the password and no signed-in user in the session after the password', async () => {
    const user = await twoFactorUser();
    const client = new WebClient(t.app);
    const started = Date.now();
    await passwordStep(client, user);
    const row = await sessionRow(t.db, sessionIdOf(client));
    assert.ok(row, 'the challenge lives in a session row');
    assert.equal(row.user_id, null);
    assert.ok(!row.payload.includes(user.plainPassword), 'no password in the session');
    const payload = JSON.parse(row.payload) as Record<string, unknown>;
    assert.equal(payload.userId, undefined);
    assert.ok(!Object.keys(payload).some((key) => /password/i.test(key)), Object.keys(payload).join());
    const challenge = payload.twoFactorChallenge as { userId: number; expiresAt: number; channel: string };
    assert.equal(challenge.userId, user.id);
    assert.equal(challenge.channel, 'site');
    assert.ok(challenge.expiresAt >= started + 5 * 60_000 && challenge.expiresAt <= Date.now() + 5 * 60_000, 'expires 5 minutes after the password');
  });

  it('shows a labelled one-time-code field, numeric, with a link to the recovery-code form', async () => {
    const user = await twoFactorUser();
    const client = new WebClient(t.app);
    await passwordStep(client, user);
    const page = await client.get('/two-factor-challenge');
    assert.equal(page.statusCode, 200);
    assert.match(page.body, /<label for="field-code">Code<\/label>/);
    assert.match(page.body, /id="field-code" name="code" type="text" inputmode="numeric"[^>]*autocomplete="one-time-code"/);
    assert.match(page.body, /href="\/two-factor-challenge\?recovery=1"/);
    const recovery = await client.get('/two-factor-challenge?recovery=1');
    assert.match(recovery.body, /<label for="field-recovery_code">Recovery code<\/label>/);
    assert.match(recovery.body, /id="field-recovery_code" name="recovery_code"/);
    assert.doesNotMatch(mainOf(recovery.body), /name="code"/);
  });

  it('signs in with the right code: 303 to /dashboard, a new session id at each step, the old ones dead', async () => {
    const user = await twoFactorUser();
    const client = new WebClient(t.app);
    await client.get('/login');
    const anonymous = sessionIdOf(client);
    await passwordStep(client, user);
    const pending = sessionIdOf(client);
    assert.notEqual(pending, anonymous);
    assert.equal(await sessionRow(t.db, anonymous), undefined, 'the id from before the password is dead');
    const response = await codeStep(client, { code: await codeAt(user.secret) });
    assert.equal(response.statusCode, 303, response.body);
    assert.equal(response.headers.location, '/dashboard');
    const signedIn = sessionIdOf(client);
    assert.notEqual(signedIn, pending);
    assert.equal(await sessionRow(t.db, pending), undefined, 'the id of the pending challenge is dead');
    const row = await sessionRow(t.db, signedIn);
    assert.equal(row?.user_id, user.id);
    assert.equal((JSON.parse(row!.payload) as Record<string, unknown>).twoFactorChallenge, undefined, 'the challenge is gone');
    assert.equal(await isLoggedIn(client), true);
  });

  it('honours "remember me" from the password step once the code is right', async () => {
    const user = await twoFactorUser();
    const client = new WebClient(t.app);
    const password = await passwordStep(client, user, { remember: '1' });
    assert.equal(setCookie(password, REMEMBER_COOKIE), undefined, 'no remember-me before the code');
    const response = await codeStep(client, { code: await codeAt(user.secret) });
    assert.equal(response.statusCode, 303);
    assert.ok(setCookie(response, REMEMBER_COOKIE)?.value, 'remember-me cookie set');

    const other = await twoFactorUser();
    const plain = new WebClient(t.app);
    await passwordStep(plain, other);
    const without = await codeStep(plain, { code: await codeAt(other.secret) });
    assert.equal(without.statusCode, 303);
    assert.equal(setCookie(without, REMEMBER_COOKIE), undefined, 'no remember-me when not asked');
  });

  it('sends the user to the page first asked for after the code', async () => {
    const user = await twoFactorUser();
    const client = new WebClient(t.app);
    assert.equal((await client.get('/profile')).headers.location, '/login');
    await passwordStep(client, user);
    const response = await codeStep(client, { code: await codeAt(user.secret) });
    assert.equal(response.headers.location, '/profile');
  });

  it('answers a wrong code with the page again: 422 and the message on the code field, not signed in', async () => {
    const user = await twoFactorUser();
    const client = new WebClient(t.app);
    await passwordStep(client, user);
    const response = await codeStep(client, { code: '000000' === (await codeAt(user.secret)) ? '111111' : '000000' });
    assert.equal(response.statusCode, 422);
    assert.equal(fieldError(response.body, 'code'), INVALID);
    assert.match(response.body, /id="field-code"[^>]*aria-invalid="true"/);
    assert.equal(await isLoggedIn(client), false);
  });

  it('answers an empty code with 422 on the code field', async () => {
    const user = await twoFactorUser();
    const client = new WebClient(t.app);
    await passwordStep(client, user);
    const response = await codeStep(client, { code: '' });
    assert.equal(response.statusCode, 422);
    assert.equal(fieldError(response.body, 'code'), 'Please enter the code from your authenticator app.');
  });

  it('says a wrong code in French to a French visitor', async () => {
    const user = await twoFactorUser();
    const client = new WebClient(t.app, { headers: { 'accept-language': 'fr' } });
    await passwordStep(client, user);
    const response = await codeStep(client, { code: '12345' });
    assert.equal(response.statusCode, 422);
    assert.equal(fieldError(response.body, 'code'), 'Le code de connexion en deux étapes fourni est invalide.');
    assert.match(response.body, /Connexion en deux étapes/);
  });

  it('refuses a replayed code with 422, even on a new sign-in', async () => {
    const user = await twoFactorUser();
    const code = await codeAt(user.secret);
    const first = new WebClient(t.app);
    await passwordStep(first, user);
    assert.equal((await codeStep(first, { code })).statusCode, 303);
    const second = new WebClient(t.app);
    await passwordStep(second, user);
    const replay = await codeStep(second, { code });
    assert.equal(replay.statusCode, 422);
    assert.equal(fieldError(replay.body, 'code'), INVALID);
    assert.equal(await isLoggedIn(second), false);
  });

  it('accepts the code of the next time step (one step of clock skew) but not two steps away', async () => {
    const user = await twoFactorUser();
    const [next, farther] = [await codeAt(user.secret, 1), await codeAt(user.secret, 2)];
    const client = new WebClient(t.app);
    await passwordStep(client, user);
    const far = await codeStep(client, { code: farther });
    assert.equal(far.statusCode, 422, 'two steps ahead is refused');
    const response = await codeStep(client, { code: next });
    assert.equal(response.statusCode, 303, response.body);
  });

  it('signs in with a recovery code once; the same code is refused after', async () => {
    const user = await twoFactorUser();
    const recoveryCode = user.recoveryCodes[0]!;
    const first = new WebClient(t.app);
    await passwordStep(first, user);
    const response = await codeStep(first, { recovery_code: recoveryCode });
    assert.equal(response.statusCode, 303, response.body);
    assert.equal(await isLoggedIn(first), true);
    const second = new WebClient(t.app);
    await passwordStep(second, user);
    const again = await codeStep(second, { recovery_code: recoveryCode });
    assert.equal(again.statusCode, 422);
    assert.equal(fieldError(again.body, 'recovery_code'), 'The provided recovery code is invalid.');
    assert.match(again.body, /name="recovery_code"/, 'the recovery form again');
  });

  it('throttles code guesses at 5 a minute per account + IP: the 6th, even right, is 429 with retry-after', async () => {
    const user = await twoFactorUser();
    const client = new WebClient(t.app, { remoteAddress: '203.0.113.7' });
    await passwordStep(client, user);
    for (let i = 0; i < 5; i += 1) {
      const wrong = await codeStep(client, { code: '12345' });
      assert.equal(wrong.statusCode, 422, `guess ${i + 1}`);
    }
    const limited = await codeStep(client, { code: await codeAt(user.secret) });
    assert.equal(limited.statusCode, 429);
    assert.match(String(limited.headers['retry-after']), /^\d+$/);
    assert.match(fieldError(limited.body, 'code') ?? '', /^Too many attempts\. Please try again in \d+ seconds\.$/);
    assert.equal(await isLoggedIn(client), false);
    // The same account from another address has its own window.
    const elsewhere = new WebClient(t.app, { remoteAddress: '198.51.100.9' });
    await passwordStep(elsewhere, user);
    assert.equal((await codeStep(elsewhere, { code: await codeAt(user.secret) })).statusCode, 303);
  });

  it('sends an expired challenge (over 5 minutes) back to /login with a message', async () => {
    const user = await twoFactorUser();
    const client = new WebClient(t.app);
    await passwordStep(client, user);
    await client.get('/two-factor-challenge');
    // Five minutes pass: the stored challenge's expiry moves into the past.
    const id = sessionIdOf(client)!;
    const row = await sessionRow(t.db, id);
    const payload = JSON.parse(row!.payload) as { twoFactorChallenge: { expiresAt: number } };
    payload.twoFactorChallenge.expiresAt = Date.now() - 1;
    await t.db.kysely.updateTable('sessions').set({ payload: JSON.stringify(payload) }).where('id', '=', id).execute();
    const response = await client.post('/two-factor-challenge', { code: await codeAt(user.secret) });
    assert.equal(response.statusCode, 303);
    assert.equal(response.headers.location, '/login');
    const login = await client.follow(response);
    assert.match(mainOf(login.body), new RegExp(EXPIRED.replace('.', '\\.')));
    assert.equal(await isLoggedIn(client), false);
    assert.equal((await client.get('/two-factor-challenge')).headers.location, '/login', 'the challenge is gone');
  });

  it('sends a visitor without a challenge from the code step to /login', async () => {
    const client = new WebClient(t.app);
    const page = await client.get('/two-factor-challenge');
    assert.equal(page.statusCode, 302);
    assert.equal(page.headers.location, '/login');
  });

  it('sends a signed-in user from the code step to /dashboard (guest only)', async () => {
    const user = await twoFactorUser();
    const client = new WebClient(t.app);
    await passwordStep(client, user);
    await codeStep(client, { code: await codeAt(user.secret) });
    const page = await client.get('/two-factor-challenge');
    assert.equal(page.headers.location, '/dashboard');
  });

  it('lets an SPA sign in with JSON: {"two_factor": true} for the password, 204 for the code', async () => {
    const user = await twoFactorUser();
    const client = new WebClient(t.app);
    await client.get('/login');
    const password = await client.postJson('/login', { email: user.email, password: user.plainPassword });
    assert.equal(password.statusCode, 200, password.body);
    assert.deepEqual(password.json(), { two_factor: true });
    assert.equal(await isLoggedIn(client), false);
    const wrong = await client.postJson('/two-factor-challenge', { code: '12345' });
    assert.equal(wrong.statusCode, 422);
    assert.deepEqual(wrong.json(), { message: INVALID, errors: { code: [INVALID] } });
    const response = await client.postJson('/two-factor-challenge', { code: await codeAt(user.secret) });
    assert.equal(response.statusCode, 204, response.body);
    assert.equal(await isLoggedIn(client), true);
  });

  it('answers an SPA posting a code without a challenge with the 422 envelope', async () => {
    const client = new WebClient(t.app);
    await client.get('/login');
    const response = await client.postJson('/two-factor-challenge', { code: '123456' });
    assert.equal(response.statusCode, 422);
    assert.deepEqual(response.json(), { message: EXPIRED, errors: { code: [EXPIRED] } });
  });

  it('leaves users without two-factor as before: the password signs in (303, or 204 for JSON)', async () => {
    const user = await createUser(t.app);
    const client = new WebClient(t.app);
    await client.get('/login');
    const response = await client.post('/login', { email: user.email, password: user.plainPassword });
    assert.equal(response.statusCode, 303);
    assert.equal(response.headers.location, '/dashboard');
    const spa = new WebClient(t.app);
    await spa.get('/login');
    const json = await spa.postJson('/login', { email: user.email, password: user.plainPassword });
    assert.equal(json.statusCode, 204);
    assert.equal(await isLoggedIn(spa), true);
  });
});

describe('two-factor sign-in of a first-party SPA (session cookie + XSRF-TOKEN)', () => {
  const SPA = 'http://localhost:5173';
  let t: TestApp;

  before(async () => {
    t = await buildStatefulApp({ SANCTUM_STATEFUL_DOMAINS: 'localhost:5173' });
  });
  after(() => t.close());

  const headers = (jar: CookieJar) => ({ origin: SPA, accept: 'application/json', cookie: jar.header(), 'x-xsrf-token': decodeURIComponent(jar.get('XSRF-TOKEN') ?? '') });

  it('answers the password with {"two_factor": true}, takes the code with the same XSRF token (204), then /api knows the user', async () => {
    const user = await createUser(t.app);
    const { secret } = await enableTwoFactor(t.app, user.id);
    const jar = new CookieJar().take(await t.app.inject({ url: '/sanctum/csrf-cookie', headers: { origin: SPA } }));
    const password = await t.app.inject({ method: 'POST', url: '/login', headers: headers(jar), payload: { email: user.email, password: user.plainPassword } });
    assert.equal(password.statusCode, 200, password.body);
    assert.deepEqual(password.json(), { two_factor: true });
    assert.equal(password.headers['access-control-allow-origin'], SPA);
    jar.take(password);
    assert.equal((await t.app.inject({ url: '/api/user', headers: { origin: SPA, cookie: jar.header() } })).statusCode, 401, 'not signed in yet');
    const code = await t.app.inject({ method: 'POST', url: '/two-factor-challenge', headers: headers(jar), payload: { code: await codeAt(secret) } });
    assert.equal(code.statusCode, 204, code.body);
    jar.take(code);
    const me = await t.app.inject({ url: '/api/user', headers: { origin: SPA, cookie: jar.header() } });
    assert.equal(me.statusCode, 200);
    assert.equal((me.json() as { id: number }).id, user.id);
  });

  it('answers a throttled SPA with 429 and retry-after', async () => {
    const user = await createUser(t.app);
    const { secret } = await enableTwoFactor(t.app, user.id);
    const jar = new CookieJar().take(await t.app.inject({ url: '/sanctum/csrf-cookie', headers: { origin: SPA } }));
    jar.take(await t.app.inject({ method: 'POST', url: '/login', headers: headers(jar), payload: { email: user.email, password: user.plainPassword } }));
    for (let i = 0; i < 5; i += 1) {
      const wrong = await t.app.inject({ method: 'POST', url: '/two-factor-challenge', headers: headers(jar), payload: { code: '12345' } });
      assert.equal(wrong.statusCode, 422);
    }
    const limited = await t.app.inject({ method: 'POST', url: '/two-factor-challenge', headers: headers(jar), payload: { code: await codeAt(secret) } });
    assert.equal(limited.statusCode, 429);
    assert.match(String(limited.headers['retry-after']), /^\d+$/);
    assert.deepEqual(Object.keys(limited.json() as object).sort(), ['errors', 'message']);
  });
});
