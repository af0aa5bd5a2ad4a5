// The panel's code step when two-factor is on (/admin/two-factor-challenge): the password alone
// does not open the panel and writes no 'admin.login' line; the code (or a recovery code) does.
// And ADMIN_REQUIRE_2FA=true: an administrator without two-factor is sent to set it up first.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { LightMyRequestResponse } from 'fastify';
import { buildTestApp, createUser, type TestApp } from '../helpers.js';
import { WebClient } from '../support/client.js';
import { codeAt, enableTwoFactor, type TwoFactorUser } from '../support/two-factor-sign-in.js';
import { sessionIdOf, sessionRow } from '../web/support.js';
import { auditRows, createAdminByCli, fieldError, type Admin } from './support.js';

const INVALID = 'The provided two-factor code is invalid.';

describe('two-factor sign-in on the panel', () => {
  let t: TestApp;

  before(async () => {
    t = await buildTestApp();
  });
  after(() => t.close());

  async function twoFactorAdmin(): Promise<Admin & TwoFactorUser> {
    const admin = await createAdminByCli(t);
    return { ...admin, ...(await enableTwoFactor(t.app, admin.id)) };
  }

  async function passwordStep(client: WebClient, admin: Admin): Promise<void> {
    const response = await client.submit('/admin/login', '/admin/login', { email: admin.email, password: admin.plainPassword });
    assert.equal(response.statusCode, 303, response.body);
    assert.equal(response.headers.location, '/admin/two-factor-challenge');
  }

  async function codeStep(client: WebClient, form: Record<string, string>): Promise<LightMyRequestResponse> {
    const page = await client.get(form.recovery_code === undefined ? '/admin/two-factor-challenge' : '/admin/two-factor-challenge?recovery=1');
    assert.equal(page.statusCode, 200, page.body);
    return client.post('/admin/two-factor-challenge', form);
  }

  const loginLines = async (id: number) => (await auditRows(t)).filter((row) => row.user_id === id && row.action === 'admin.login');

  it('does not open the panel with the password alone, and writes no admin.login line for it', async () => {
    const admin = await twoFactorAdmin();
    const client = new WebClient(t.app);
    await passwordStep(client, admin);
    assert.equal((await client.get('/admin')).headers.location, '/admin/login');
    assert.equal((await loginLines(admin.id)).length, 0);
  });

  it('shows the code step in the panel layout with a one-time-code field', async () => {
    const admin = await twoFactorAdmin();
    const client = new WebClient(t.app);
    await passwordStep(client, admin);
    const page = await client.get('/admin/two-factor-challenge');
    assert.equal(page.statusCode, 200);
    assert.match(page.body, /action="\/admin\/two-factor-challenge"/);
    assert.match(page.body, /id="field-code" name="code" type="text" inputmode="numeric"[^>]*autocomplete="one-time-code"/);
    assert.match(page.body, /href="\/admin\/two-factor-challenge\?recovery=1"/);
  });

  it('answers a wrong code with 422 and the message on the field; still no audit line', async () => {
    const admin = await twoFactorAdmin();
    const client = new WebClient(t.app);
    await passwordStep(client, admin);
    const response = await codeStep(client, { code: '12345' });
    assert.equal(response.statusCode, 422);
    assert.equal(fieldError(response.body, 'code'), INVALID);
    assert.equal((await loginLines(admin.id)).length, 0);
    assert.equal((await client.get('/admin')).statusCode, 302);
  });

  it('opens the panel with the right code and writes the admin.login line then, once', async () => {
    const admin = await twoFactorAdmin();
    const client = new WebClient(t.app);
    await passwordStep(client, admin);
    const response = await codeStep(client, { code: await codeAt(admin.secret) });
    assert.equal(response.statusCode, 303, response.body);
    assert.equal(response.headers.location, '/admin');
    assert.equal((await client.get('/admin')).statusCode, 200);
    const lines = await loginLines(admin.id);
    assert.equal(lines.length, 1);
    assert.equal(lines[0]?.actor_email, admin.email);
  });

  it('opens the panel with a recovery code, once', async () => {
    const admin = await twoFactorAdmin();
    const first = new WebClient(t.app);
    await passwordStep(first, admin);
    assert.equal((await codeStep(first, { recovery_code: admin.recoveryCodes[3]! })).statusCode, 303);
    const second = new WebClient(t.app);
    await passwordStep(second, admin);
    const again = await codeStep(second, { recovery_code: admin.recoveryCodes[3]! });
    assert.equal(again.statusCode, 422);
    assert.equal(fieldError(again.body, 'recovery_code'), 'The provided recovery code is invalid.');
  });

  it('throttles code guesses: the 6th in a minute is 429 with retry-after, even with the right code', async () => {
    const admin = await twoFactorAdmin();
    const client = new WebClient(t.app);
    await passwordStep(client, admin);
    for (let i = 0; i < 5; i += 1) assert.equal((await codeStep(client, { code: '12345' })).statusCode, 422);
    const limited = await codeStep(client, { code: await codeAt(admin.secret) });
    assert.equal(limited.statusCode, 429);
    assert.match(String(limited.headers['retry-after']), /^\d+$/);
  });

  it('does not take a challenge of the site on the panel', async () => {
    const admin = await twoFactorAdmin();
    const client = new WebClient(t.app);
    await client.get('/login');
    assert.equal((await client.post('/login', { email: admin.email, password: admin.plainPassword })).headers.location, '/two-factor-challenge');
    const page = await client.get('/admin/two-factor-challenge');
    assert.equal(page.statusCode, 302);
    assert.equal(page.headers.location, '/admin/login');
  });

  it('sends an expired panel challenge back to /admin/login', async () => {
    const admin = await twoFactorAdmin();
    const client = new WebClient(t.app);
    await passwordStep(client, admin);
    await client.get('/admin/two-factor-challenge');
    const row = await sessionRow(t.db, sessionIdOf(client));
    assert.ok(row);
    const payload = JSON.parse(row.payload) as { twoFactorChallenge: { expiresAt: number } };
    payload.twoFactorChallenge.expiresAt = Date.now() - 1;
    await t.db.kysely.updateTable('sessions').set({ payload: JSON.stringify(payload) }).where('id', '=', row.id).execute();
    const response = await client.post('/admin/two-factor-challenge', { code: await codeAt(admin.secret) });
    assert.equal(response.statusCode, 303);
    assert.equal(response.headers.location, '/admin/login');
    assert.match((await client.follow(response)).body, /Your sign-in has expired\. Please sign in again\./);
    assert.equal((await loginLines(admin.id)).length, 0);
  });

  it('keeps the password-only panel sign-in of an administrator without two-factor, audited at once', async () => {
    const admin = await createAdminByCli(t);
    const client = new WebClient(t.app);
    const response = await client.submit('/admin/login', '/admin/login', { email: admin.email, password: admin.plainPassword });
    assert.equal(response.headers.location, '/admin');
    assert.equal((await loginLines(admin.id)).length, 1);
  });
});

describe('ADMIN_REQUIRE_2FA=true', () => {
  let t: TestApp;

  before(async () => {
    t = await buildTestApp({ ADMIN_REQUIRE_2FA: 'true' });
  });
  after(() => t.close());

  it('sends an administrator without two-factor to /admin/two-factor before any other panel page', async () => {
    const admin = await createAdminByCli(t);
    const client = new WebClient(t.app);
    const login = await client.submit('/admin/login', '/admin/login', { email: admin.email, password: admin.plainPassword });
    assert.equal(login.statusCode, 303);
    for (const page of ['/admin', '/admin/users', '/admin/posts', '/admin/audit']) {
      const response = await client.get(page);
      assert.equal(response.statusCode, 302, page);
      assert.equal(response.headers.location, '/admin/two-factor', page);
    }
  });

  it('leaves the set-up page and sign-out reachable', async () => {
    const admin = await createAdminByCli(t);
    const client = new WebClient(t.app);
    await client.submit('/admin/login', '/admin/login', { email: admin.email, password: admin.plainPassword });
    const setup = await client.get('/admin/two-factor');
    assert.notEqual(setup.headers.location, '/admin/two-factor', 'the set-up page is not redirected to itself');
    assert.notEqual(setup.statusCode, 302);
    const logout = await client.post('/admin/logout');
    assert.equal(logout.statusCode, 303);
    assert.equal(logout.headers.location, '/admin/login');
  });

  it('lets an administrator with two-factor on into every page', async () => {
    const admin = await createAdminByCli(t);
    const { secret } = await enableTwoFactor(t.app, admin.id);
    const client = new WebClient(t.app);
    await client.submit('/admin/login', '/admin/login', { email: admin.email, password: admin.plainPassword });
    await client.get('/admin/two-factor-challenge');
    assert.equal((await client.post('/admin/two-factor-challenge', { code: await codeAt(secret) })).statusCode, 303);
    assert.equal((await client.get('/admin/users')).statusCode, 200);
  });

  it('does not touch the site: a user without two-factor still signs in there', async () => {
    const user = await createUser(t.app);
    const client = new WebClient(t.app);
    await client.get('/login');
    assert.equal((await client.post('/login', { email: user.email, password: user.plainPassword })).headers.location, '/dashboard');
  });
});
