// Deleting one's own account from the security page: behind a fresh password confirmation; the
// account's sessions, API tokens, passkeys and remember-me tokens go with it; the audit log keeps
// the event (with the email, no longer linked to a row); the browser ends logged out on /.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { REMEMBER_COOKIE } from '../../src/http/web/remember.js';
import { SESSION_COOKIE } from '../../src/plugins/session.js';
import { buildTestApp, createUser, type TestApp } from '../helpers.js';
import { WebClient, setCookie } from '../support/client.js';
import { isLoggedIn, login, mainOf, sessionIdOf, sessionRow } from './support.js';

const PASSWORD = 'delete-me-password-1';

describe('account deletion', () => {
  let t: TestApp;

  before(async () => {
    t = await buildTestApp();
  });
  after(() => t.close());

  const count = async (table: 'sessions' | 'personal_access_tokens' | 'passkeys' | 'remember_tokens', userId: number) =>
    Number((await t.db.kysely.selectFrom(table).select((eb) => eb.fn.countAll().as('n')).where('user_id', '=', userId).executeTakeFirstOrThrow()).n);

  /** A user with two remembered browsers, an API token and a passkey. */
  const accountWithEverything = async () => {
    const user = await createUser(t.app, { name: 'Grace Hopper', password: PASSWORD });
    const browser = new WebClient(t.app);
    const phone = new WebClient(t.app);
    await login(browser, user.email, PASSWORD, { remember: '1' });
    await login(phone, user.email, PASSWORD, { remember: '1' });
    const token = await t.app.services.tokens.issue(user.id, 'cli');
    await t.db.kysely
      .insertInto('passkeys')
      .values({ user_id: user.id, name: 'Laptop', credential_id: `cred-${user.id}`, public_key: 'pk', counter: 0, transports: '[]', backed_up: 0, last_used_at: null, created_at: new Date().toISOString() })
      .execute();
    return { user, browser, phone, token: token.plaintext };
  };

  const bearer = (token: string) => t.app.inject({ method: 'GET', url: '/api/user', headers: { authorization: `Bearer ${token}` } });

  it('shows the delete section on the security page, linking to a confirmation page behind the password', async () => {
    const { user, browser } = await accountWithEverything();
    const main = mainOf((await browser.get('/security')).body);
    assert.match(main, /<h2 id="delete-account-title">Delete account<\/h2>/);
    assert.match(main, /This cannot be undone/);
    assert.match(main, /href="\/user\/delete"/);
    assert.doesNotMatch(main, /action="\/user\/delete"/, 'no one-click deletion on the security page');
    assert.match(mainOf((await browser.get('/security', { 'accept-language': 'fr' })).body), /Supprimer le compte/);

    const asked = await browser.get('/user/delete');
    assert.equal(asked.statusCode, 302);
    assert.equal(asked.headers.location, '/user/confirm-password');
    await browser.get('/user/confirm-password');
    const confirmed = await browser.post('/user/confirm-password', { password: PASSWORD });
    assert.equal(confirmed.headers.location, '/user/delete');
    const page = await browser.get('/user/delete');
    assert.equal(page.statusCode, 200);
    assert.match(mainOf(page.body), /<h1 id="delete-account-title">Delete account<\/h1>/);
    assert.match(mainOf(page.body), /action="\/user\/delete"[\s\S]*Delete my account for good/);
    assert.ok(await t.app.services.users.findById(user.id), 'opening the page deletes nothing');
  });

  it('asks for the password first and deletes nothing before', async () => {
    const { user, browser, token } = await accountWithEverything();
    await browser.get('/security');
    const asked = await browser.post('/user/delete');
    assert.equal(asked.statusCode, 303);
    assert.equal(asked.headers.location, '/user/confirm-password');
    assert.ok(await t.app.services.users.findById(user.id));
    assert.equal((await bearer(token)).statusCode, 200);
    const json = new WebClient(t.app);
    await login(json, user.email, PASSWORD);
    await json.get('/security');
    assert.equal((await json.postJson('/user/delete', {})).statusCode, 423);
    assert.ok(await t.app.services.users.findById(user.id));
  });

  it('deletes the account, its sessions, tokens, passkeys and remember-me tokens, and logs the browser out', async () => {
    const { user, browser, phone, token } = await accountWithEverything();
    assert.equal((await bearer(token)).statusCode, 200);
    assert.equal(await count('sessions', user.id), 2);
    await browser.get('/user/confirm-password');
    await browser.post('/user/confirm-password', { password: PASSWORD });
    await browser.get('/security');
    const oldSession = sessionIdOf(browser);
    const deleted = await browser.post('/user/delete');
    assert.equal(deleted.statusCode, 303);
    assert.equal(deleted.headers.location, '/');
    const cleared = setCookie(deleted, REMEMBER_COOKIE);
    assert.ok(cleared !== undefined && cleared.value === '', 'the remember cookie is cleared by the deletion itself');
    assert.match(mainOf((await browser.follow(deleted)).body), /Your account has been deleted/);

    assert.equal(await t.app.services.users.findById(user.id), undefined);
    for (const table of ['sessions', 'personal_access_tokens', 'passkeys', 'remember_tokens'] as const) assert.equal(await count(table, user.id), 0, table);
    assert.equal(await sessionRow(t.db, oldSession), undefined);
    assert.equal(await isLoggedIn(browser), false);
    // The other browser, session cookie and remember cookie alike, gets nothing.
    assert.equal(await isLoggedIn(phone), false);
    phone.cookies.delete(SESSION_COOKIE);
    assert.equal(await isLoggedIn(phone), false);
    assert.equal((await bearer(token)).statusCode, 401, 'the old bearer token is refused');
  });

  it('keeps an account.deleted line in the audit log, with the email, no longer linked to a user', async () => {
    const { user, browser } = await accountWithEverything();
    await browser.get('/user/confirm-password');
    await browser.post('/user/confirm-password', { password: PASSWORD });
    await browser.get('/security');
    await browser.post('/user/delete');
    const line = await t.db.kysely.selectFrom('audit_logs').selectAll().where('action', '=', 'account.deleted').where('actor_email', '=', user.email).executeTakeFirstOrThrow();
    assert.equal(line.user_id, null);
    assert.equal(line.actor_name, 'Grace Hopper');
    assert.equal(line.subject_label, user.email);
    assert.equal(line.subject_id, String(user.id));
  });

  it('refuses guests and forged posts', async () => {
    const guest = new WebClient(t.app);
    await guest.get('/login');
    assert.equal((await guest.post('/user/delete')).headers.location, '/login');
    const { user, browser } = await accountWithEverything();
    await browser.get('/user/confirm-password');
    await browser.post('/user/confirm-password', { password: PASSWORD });
    assert.equal((await browser.post('/user/delete', {}, { token: false })).statusCode, 419);
    assert.ok(await t.app.services.users.findById(user.id));
  });
});
