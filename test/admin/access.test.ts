// Who gets into /admin: the panel's own login and guard, kept apart from the site's login, the
// access check on every request, the throttle, CSRF, and administrators made by the CLI only.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { runInProcess } from '../cli/harness.js';
import { buildTestApp, createUser, type TestApp } from '../helpers.js';
import { WebClient } from '../support/client.js';
import { auditRows, createAdminByCli, fieldError, signedInAdmin, siteForm } from './support.js';

const FAILED = 'These credentials do not match our records.';
const SESSION = 'tessera_session';

describe('panel guard', () => {
  let t: TestApp;
  before(async () => {
    t = await buildTestApp();
  });
  after(() => t.close());

  const pages = ['/admin', '/admin/users', '/admin/users/new', '/admin/posts', '/admin/posts/new', '/admin/settings', '/admin/settings/new', '/admin/tokens', '/admin/audit'];

  for (const url of pages) {
    it(`sends a visitor from GET ${url} to /admin/login`, async () => {
      const response = await new WebClient(t.app).get(url);
      assert.equal(response.statusCode, 302);
      assert.equal(response.headers.location, '/admin/login');
    });
  }

  it('sends a visitor posting a panel form (with a valid CSRF token) to /admin/login, changing nothing', async () => {
    const client = new WebClient(t.app);
    await client.get('/admin/login');
    const response = await client.post('/admin/settings', { key: 'planted', type: 'text', value: 'x' });
    assert.equal(response.statusCode, 302);
    assert.equal(response.headers.location, '/admin/login');
    assert.equal(await t.app.services.admin.findSetting('planted'), undefined);
  });

  it('opens every panel page to an administrator signed in to the panel', async () => {
    const { client } = await signedInAdmin(t);
    for (const url of pages) {
      const response = await client.get(url);
      assert.equal(response.statusCode, 200, url);
      assert.match(String(response.headers['content-type']), /^text\/html/);
      assert.equal(response.headers['cache-control'], 'no-store');
    }
  });

  it('sends an administrator who opens /admin/login to the dashboard', async () => {
    const { client } = await signedInAdmin(t);
    const response = await client.get('/admin/login');
    assert.equal(response.statusCode, 302);
    assert.equal(response.headers.location, '/admin');
  });

  it('sends the administrator to the panel page first asked for', async () => {
    const admin = await createAdminByCli(t);
    const client = new WebClient(t.app);
    assert.equal((await client.get('/admin/posts?status=draft')).headers.location, '/admin/login');
    const response = await client.submit('/admin/login', '/admin/login', { email: admin.email, password: admin.plainPassword });
    assert.equal(response.statusCode, 303);
    assert.equal(response.headers.location, '/admin/posts?status=draft');
  });

  it('does not send a panel login to a site page asked for before', async () => {
    const admin = await createAdminByCli(t);
    const client = new WebClient(t.app);
    assert.equal((await client.get('/dashboard')).headers.location, '/login');
    const response = await client.submit('/admin/login', '/admin/login', { email: admin.email, password: admin.plainPassword });
    assert.equal(response.headers.location, '/admin');
  });
});

describe('panel and site logins are separate', () => {
  let t: TestApp;
  before(async () => {
    t = await buildTestApp();
  });
  after(() => t.close());

  const siteLogin = async (client: WebClient, email: string, password: string) => {
    const response = await client.submit('/login', '/login', { email, password });
    assert.equal(response.statusCode, 303, response.body);
  };

  it('a site login, even of an administrator, never opens /admin', async () => {
    const admin = await createAdminByCli(t);
    const client = new WebClient(t.app);
    await siteLogin(client, admin.email, admin.plainPassword);
    assert.equal((await client.get('/dashboard')).statusCode, 200);
    const response = await client.get('/admin');
    assert.equal(response.statusCode, 302);
    assert.equal(response.headers.location, '/admin/login');
  });

  it('a panel login never opens /dashboard', async () => {
    const { client } = await signedInAdmin(t);
    const response = await client.get('/dashboard');
    assert.equal(response.statusCode, 302);
    assert.equal(response.headers.location, '/login');
  });

  it('logging out of the panel leaves the site login, under a new session id', async () => {
    const admin = await createAdminByCli(t);
    const client = new WebClient(t.app);
    await siteLogin(client, admin.email, admin.plainPassword);
    await client.adminLogin(admin.email, admin.plainPassword);
    const before = client.cookies.get(SESSION);
    await client.get('/admin');
    const response = await client.post('/admin/logout');
    assert.equal(response.statusCode, 303);
    assert.equal(response.headers.location, '/admin/login');
    assert.notEqual(client.cookies.get(SESSION), before);
    assert.equal((await client.get('/dashboard')).statusCode, 200);
    assert.equal((await client.get('/admin')).headers.location, '/admin/login');
  });

  it('logging out of the site leaves the panel login', async () => {
    const admin = await createAdminByCli(t);
    const client = new WebClient(t.app);
    await client.adminLogin(admin.email, admin.plainPassword);
    await siteLogin(client, admin.email, admin.plainPassword);
    await client.get('/dashboard');
    assert.equal((await client.post('/logout')).statusCode, 303);
    assert.equal((await client.get('/dashboard')).headers.location, '/login');
    assert.equal((await client.get('/admin')).statusCode, 200);
  });

  it('gives a new session id at panel login, and the old one is worth nothing after it', async () => {
    const admin = await createAdminByCli(t);
    const client = new WebClient(t.app);
    // A session begun before the login: the panel page first asked for is kept in it.
    await client.get('/admin');
    await client.get('/admin/login');
    const planted = client.cookies.get(SESSION);
    assert.ok(planted, 'a session was begun before the login');
    await client.post('/admin/login', { email: admin.email, password: admin.plainPassword });
    assert.notEqual(client.cookies.get(SESSION), planted);
    const replay = await t.app.inject({ method: 'GET', url: '/admin', headers: { cookie: `${SESSION}=${planted}` } });
    assert.equal(replay.statusCode, 302);
    assert.equal(replay.headers.location, '/admin/login');
  });

  it('keeps the site login through a panel login in the same browser', async () => {
    const admin = await createAdminByCli(t);
    const client = new WebClient(t.app);
    await siteLogin(client, admin.email, admin.plainPassword);
    await client.adminLogin(admin.email, admin.plainPassword);
    assert.equal((await client.get('/dashboard')).statusCode, 200);
    assert.equal((await client.get('/admin')).statusCode, 200);
  });

  it('writes an audit line for each panel login and logout', async () => {
    const { admin, client } = await signedInAdmin(t);
    await client.get('/admin');
    await client.post('/admin/logout');
    const lines = (await auditRows(t)).filter((row) => row.user_id === admin.id);
    assert.deepEqual(
      lines.map((row) => row.action),
      ['admin.logout', 'admin.login'],
    );
    assert.equal(lines[1]?.actor_email, admin.email);
    assert.ok(lines[1]?.created_at);
  });
});

describe('the access check', () => {
  let t: TestApp;
  before(async () => {
    t = await buildTestApp();
  });
  after(() => t.close());

  it('answers 403 on every panel request once the administrator is demoted, at once', async () => {
    const { admin, client } = await signedInAdmin(t);
    assert.equal((await client.get('/admin/users')).statusCode, 200);
    const token = client.csrf;
    const demote = await runInProcess(['admin:demote', admin.email], { db: t.db, config: t.config });
    assert.equal(demote.code, 0, demote.stderr);
    for (const url of ['/admin', '/admin/users', '/admin/posts/new']) {
      assert.equal((await client.get(url)).statusCode, 403, url);
    }
    const write = await client.post('/admin/settings', { key: 'after_demotion', type: 'text', value: 'x' }, { token: token ?? false });
    assert.equal(write.statusCode, 403);
    assert.equal(await t.app.services.admin.findSetting('after_demotion'), undefined);
  });

  it('lets a demoted administrator still sign out of the panel', async () => {
    const { admin, client } = await signedInAdmin(t);
    await client.get('/admin');
    await t.app.services.users.setAdmin(admin.email, false);
    assert.equal((await client.post('/admin/logout')).statusCode, 303);
    assert.equal((await client.get('/admin')).headers.location, '/admin/login');
  });

  it('opens the panel to a user promoted with admin:promote, and only then', async () => {
    const user = await createUser(t.app);
    const client = new WebClient(t.app);
    const refused = await client.submit('/admin/login', '/admin/login', { email: user.email, password: user.plainPassword });
    assert.equal(refused.statusCode, 422);
    const promote = await runInProcess(['admin:promote', user.email], { db: t.db, config: t.config });
    assert.equal(promote.code, 0, promote.stderr);
    await client.adminLogin(user.email, user.plainPassword);
    assert.equal((await client.get('/admin')).statusCode, 200);
  });

  it('sends a deleted administrator back to /admin/login', async () => {
    const { admin, client } = await signedInAdmin(t);
    await t.db.kysely.deleteFrom('users').where('id', '=', admin.id).execute();
    const response = await client.get('/admin');
    assert.equal(response.statusCode, 302);
    assert.equal(response.headers.location, '/admin/login');
  });
});

describe('POST /admin/login', () => {
  let t: TestApp;
  before(async () => {
    t = await buildTestApp();
  });
  after(() => t.close());

  it('answers an unknown email, a wrong password and a non-administrator with one and the same message', async () => {
    const admin = await createAdminByCli(t);
    const user = await createUser(t.app);
    const attempts = [
      { name: 'unknown email', email: 'nobody-here@example.com', password: admin.plainPassword },
      { name: 'wrong password', email: admin.email, password: 'not the password' },
      { name: 'right password, not an administrator', email: user.email, password: user.plainPassword },
    ];
    for (const attempt of attempts) {
      const client = new WebClient(t.app, { remoteAddress: `10.0.0.${attempts.indexOf(attempt) + 1}` });
      const response = await client.submit('/admin/login', '/admin/login', { email: attempt.email, password: attempt.password });
      assert.equal(response.statusCode, 422, attempt.name);
      assert.equal(fieldError(response.body, 'email'), FAILED, attempt.name);
      assert.equal(fieldError(response.body, 'password'), null, attempt.name);
      assert.match(response.body, new RegExp(`value="${attempt.email.replace(/[.]/g, '\\.')}"`), 'the email is kept');
      assert.ok(!response.body.includes(attempt.password), 'the password is never sent back');
      assert.equal((await client.get('/admin')).headers.location, '/admin/login', attempt.name);
    }
  });

  const invalid = [
    { name: 'no email', form: { password: 'whatever' }, field: 'email', message: 'The email field is required.' },
    { name: 'an empty email', form: { email: '  ', password: 'whatever' }, field: 'email', message: 'The email field is required.' },
    { name: 'a malformed email', form: { email: 'not-an-email', password: 'whatever' }, field: 'email', message: 'The email field must be a valid email address.' },
    { name: 'no password', form: { email: 'a@example.com' }, field: 'password', message: 'The password field is required.' },
  ];
  for (const row of invalid) {
    it(`shows an inline error with 422 for ${row.name}`, async () => {
      const client = new WebClient(t.app);
      const response = await client.submit('/admin/login', '/admin/login', row.form);
      assert.equal(response.statusCode, 422);
      assert.equal(fieldError(response.body, row.field), row.message);
      assert.match(response.body, new RegExp(`id="field-${row.field}"[^>]*aria-invalid="true"`));
    });
  }

  it('shows the errors in French to a French visitor', async () => {
    const client = new WebClient(t.app);
    await client.get('/admin/login', { 'accept-language': 'fr' });
    const response = await client.post('/admin/login', { email: 'nobody@example.com', password: 'x' }, { headers: { 'accept-language': 'fr' } });
    assert.equal(fieldError(response.body, 'email'), 'Ces identifiants ne correspondent pas à nos enregistrements.');
    assert.match(response.body, /<html lang="fr">/);
  });

  it('refuses the sixth attempt in a minute with 429, without checking the password, even a right one', async () => {
    const admin = await createAdminByCli(t);
    const client = new WebClient(t.app, { remoteAddress: '10.1.1.1' });
    await client.get('/admin/login');
    for (let i = 0; i < 5; i += 1) {
      assert.equal((await client.post('/admin/login', { email: admin.email, password: `wrong ${i}` })).statusCode, 422);
    }
    const locked = await client.post('/admin/login', { email: admin.email, password: admin.plainPassword });
    assert.equal(locked.statusCode, 429);
    const message = fieldError(locked.body, 'email') ?? '';
    assert.match(message, /^Too many login attempts\. Please try again in \d+ seconds\.$/);
    const seconds = Number(/(\d+) seconds/.exec(message)?.[1]);
    assert.ok(seconds >= 1 && seconds <= 60, message);
    assert.equal(locked.headers['retry-after'], String(seconds));
    assert.equal((await client.get('/admin')).headers.location, '/admin/login');
  });

  it('counts the spellings of one email that differ in case in one bucket', async () => {
    const admin = await createAdminByCli(t, { email: 'bucket@example.com' });
    const client = new WebClient(t.app, { remoteAddress: '10.1.1.2' });
    await client.get('/admin/login');
    for (const email of ['bucket@example.com', 'BUCKET@example.com', 'Bucket@Example.com', 'bUcKeT@example.com', 'bucket@EXAMPLE.com']) {
      await client.post('/admin/login', { email, password: 'wrong' });
    }
    const locked = await client.post('/admin/login', { email: admin.email, password: admin.plainPassword });
    assert.equal(locked.statusCode, 429);
  });

  it('throttles per email and IP: another IP, or another email, may still try', async () => {
    const admin = await createAdminByCli(t);
    const other = await createAdminByCli(t);
    const attacker = new WebClient(t.app, { remoteAddress: '10.1.1.3' });
    await attacker.get('/admin/login');
    for (let i = 0; i < 6; i += 1) await attacker.post('/admin/login', { email: admin.email, password: 'wrong' });
    assert.equal((await attacker.post('/admin/login', { email: admin.email, password: admin.plainPassword })).statusCode, 429);
    assert.equal((await attacker.post('/admin/login', { email: other.email, password: other.plainPassword })).statusCode, 303);
    await new WebClient(t.app, { remoteAddress: '10.1.1.4' }).adminLogin(admin.email, admin.plainPassword);
  });

  it('forgets the failures of an email and IP after a successful login', async () => {
    const admin = await createAdminByCli(t);
    const client = new WebClient(t.app, { remoteAddress: '10.1.1.5' });
    await client.get('/admin/login');
    for (let i = 0; i < 4; i += 1) await client.post('/admin/login', { email: admin.email, password: 'wrong' });
    assert.equal((await client.post('/admin/login', { email: admin.email, password: admin.plainPassword })).statusCode, 303);
    const again = new WebClient(t.app, { remoteAddress: '10.1.1.5' });
    await again.get('/admin/login');
    for (let i = 0; i < 4; i += 1) assert.equal((await again.post('/admin/login', { email: admin.email, password: 'wrong' })).statusCode, 422);
    assert.equal((await again.post('/admin/login', { email: admin.email, password: admin.plainPassword })).statusCode, 303);
  });

  // One password behind two doors: its wrong tries count once (test/web/login-buckets.test.ts has the API).
  it('shares its bucket with the site login', async () => {
    const admin = await createAdminByCli(t);
    const client = new WebClient(t.app, { remoteAddress: '10.1.1.6' });
    await client.get('/login');
    for (let i = 0; i < 6; i += 1) await client.post('/login', { email: admin.email, password: 'wrong password' });
    assert.equal((await client.post('/login', { email: admin.email, password: admin.plainPassword })).statusCode, 429);
    await client.get('/admin/login');
    assert.equal((await client.post('/admin/login', { email: admin.email, password: admin.plainPassword })).statusCode, 429);
  });
});

describe('CSRF on panel forms', () => {
  let t: TestApp;
  before(async () => {
    t = await buildTestApp();
  });
  after(() => t.close());

  it('refuses every panel form posted without its token with 419, and changes nothing', async () => {
    const { admin, client } = await signedInAdmin(t);
    const user = await createUser(t.app);
    const post = await t.app.services.posts.create(admin.id, { title: 'Guarded post', status: 'draft' });
    const token = await t.app.services.tokens.issue(user.id, 'phone');
    const forms: [string, Record<string, string>][] = [
      ['/admin/users', { name: 'Mallory', email: 'mallory@example.com', password: 'a long passphrase', password_confirmation: 'a long passphrase' }],
      [`/admin/users/${user.id}`, { name: 'Renamed', email: user.email }],
      [`/admin/users/${user.id}/delete`, {}],
      ['/admin/posts', { title: 'Forged', locale: 'en', status: 'published' }],
      [`/admin/posts/${post.id}/publish`, {}],
      [`/admin/posts/${post.id}/delete`, {}],
      ['/admin/settings', { key: 'forged', type: 'text', value: 'x' }],
      ['/admin/settings/site', Object.fromEntries(siteForm({ site_name: 'Forged' }))],
      ['/admin/settings/site_name', { type: 'text', value: 'Forged', is_public: '1' }],
      ['/admin/settings/site_name/delete', {}],
      [`/admin/tokens/${token.id}/revoke`, {}],
      [`/admin/tokens/users/${user.id}/revoke`, {}],
      ['/admin/logout', {}],
    ];
    const before = (await auditRows(t)).length;
    for (const [url, form] of forms) {
      const missing = await client.post(url, form, { token: false });
      assert.equal(missing.statusCode, 419, `${url} without a token`);
      const wrong = await client.post(url, form, { token: 'not-the-token' });
      assert.equal(wrong.statusCode, 419, `${url} with a wrong token`);
    }
    assert.equal(await t.app.services.users.findByEmail('mallory@example.com'), undefined);
    assert.equal((await t.app.services.users.findById(user.id))?.name, user.name);
    assert.equal((await t.app.services.admin.findPost(post.id))?.status, 'draft');
    assert.equal(await t.app.services.admin.findSetting('forged'), undefined);
    assert.equal((await t.app.services.admin.findSetting('site_name'))?.value, '"Tessera"');
    assert.ok(await t.app.services.admin.findToken(token.id));
    assert.equal((await client.get('/admin')).statusCode, 200, 'still signed in');
    assert.equal((await auditRows(t)).length, before, 'no audit line for a refused form');
  });

  it('refuses a login form posted without its token with 419', async () => {
    const admin = await createAdminByCli(t);
    const client = new WebClient(t.app);
    await client.get('/admin/login');
    const response = await client.post('/admin/login', { email: admin.email, password: admin.plainPassword }, { token: false });
    assert.equal(response.statusCode, 419);
    assert.equal((await client.get('/admin')).headers.location, '/admin/login');
  });
});
