// The account rules as the site meets them (issue 24 §2): signing out everywhere (a password
// reset, a password change on /profile or through the API, "log out other browser sessions")
// also drops what was started under the old credentials: a pending email change and a
// two-factor set-up not yet confirmed.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { bearer, createUser, issueToken, type TestApp } from '../helpers.js';
import { WebClient } from '../support/client.js';
import { linkIn, type MailServer } from './mail-server.js';
import { appWithMail, closeAppWithMail, login } from './support.js';

const APP = 'http://localhost:3000';
const PASSWORD = 'site-rules-password-1';
const NEW_PASSWORD = 'site-rules-password-2';

describe('signing out everywhere drops pending changes', () => {
  let mail: MailServer;
  let t: TestApp;
  let counter = 0;

  before(async () => {
    ({ t, mail } = await appWithMail({ LOG_LEVEL: 'error' }));
  });
  after(() => closeAppWithMail(t, mail));

  /** A user signed in with a fresh password confirmation, as the security page's forms need. */
  const confirmedUser = async () => {
    counter += 1;
    const user = await createUser(t.app, { email: `site-owner-${counter}@example.com`, password: PASSWORD });
    const client = new WebClient(t.app);
    await login(client, user.email, PASSWORD);
    await client.get('/user/confirm-password');
    assert.equal((await client.post('/user/confirm-password', { password: PASSWORD })).statusCode, 303);
    await client.get('/security');
    return { user, client };
  };

  /** Starts an email change from the security page and a two-factor set-up; returns the change's link. */
  const startChanges = async (user: Awaited<ReturnType<typeof confirmedUser>>['user'], client: WebClient) => {
    const next = `next-${user.email}`;
    assert.equal((await client.post('/user/email', { email: next })).statusCode, 303);
    await t.app.services.mail.settled();
    const link = new URL(linkIn(mail.to(next)[0]!, `${APP}/email/change/`)).pathname;
    const fresh = await t.app.services.users.findById(user.id);
    await t.app.services.twoFactor.begin(fresh!);
    return { next, link };
  };

  const state = async (userId: number) => {
    const row = await t.db.kysely.selectFrom('users').select(['email', 'two_factor_secret']).where('id', '=', userId).executeTakeFirstOrThrow();
    const pending = await t.db.kysely.selectFrom('email_changes').select('id').where('user_id', '=', userId).executeTakeFirst();
    return { email: row.email, twoFactorSecret: row.two_factor_secret, pending: pending !== undefined };
  };

  /** The confirmation link posted from a browser that is not signed in: refused, the address unchanged. */
  const assertLinkDead = async (userId: number, email: string, link: string) => {
    const stranger = new WebClient(t.app);
    const page = await stranger.get(link);
    assert.equal(page.statusCode, 404);
    // Posted as the page's button would (a CSRF token from a page of the site).
    await stranger.get('/login');
    const posted = await stranger.post(link);
    assert.equal(posted.statusCode, 404);
    const after = await state(userId);
    assert.equal(after.email, email);
    assert.equal(after.pending, false);
    assert.equal(after.twoFactorSecret, null, 'the unconfirmed two-factor set-up is gone');
  };

  it('a password reset: the confirmation link of an email change started before it is refused, the address unchanged', async () => {
    const { user, client } = await confirmedUser();
    const { link } = await startChanges(user, client);
    const before = await state(user.id);
    assert.equal(before.pending, true);
    assert.notEqual(before.twoFactorSecret, null);

    const owner = new WebClient(t.app);
    await owner.get('/forgot-password');
    await owner.post('/forgot-password', { email: user.email });
    await t.app.services.mail.settled();
    const resetLink = new URL(linkIn(mail.to(user.email).at(-1)!, `${APP}/reset-password/`));
    await owner.get(`${resetLink.pathname}${resetLink.search}`);
    const token = decodeURIComponent(resetLink.pathname.split('/').pop()!);
    const reset = await owner.post('/reset-password', { token, email: user.email, password: NEW_PASSWORD, password_confirmation: NEW_PASSWORD });
    assert.equal(reset.statusCode, 303, reset.body);

    await assertLinkDead(user.id, user.email, link);
  });

  it('a password change on /profile', async () => {
    const { user, client } = await confirmedUser();
    const { link } = await startChanges(user, client);
    await client.get('/profile');
    const changed = await client.post('/profile/password', { current_password: PASSWORD, password: NEW_PASSWORD, password_confirmation: NEW_PASSWORD });
    assert.equal(changed.statusCode, 303, changed.body);
    await assertLinkDead(user.id, user.email, link);
  });

  it('a password change through PUT /api/user/password', async () => {
    const { user, client } = await confirmedUser();
    const { link } = await startChanges(user, client);
    const token = await issueToken(t.app, user.email, PASSWORD);
    const changed = await t.app.inject({ method: 'PUT', url: '/api/user/password', headers: bearer(token), payload: { current_password: PASSWORD, password: NEW_PASSWORD, password_confirmation: NEW_PASSWORD } });
    assert.equal(changed.statusCode, 204, changed.body);
    await assertLinkDead(user.id, user.email, link);
  });

  it('"log out other browser sessions" on the security page', async () => {
    const { user, client } = await confirmedUser();
    const { link } = await startChanges(user, client);
    const other = new WebClient(t.app);
    await login(other, user.email, PASSWORD);
    await client.get('/security');
    const ended = await client.post('/user/sessions/others');
    assert.equal(ended.statusCode, 303, ended.body);
    assert.equal((await other.get('/dashboard')).statusCode, 302, 'the other browser is out');
    await assertLinkDead(user.id, user.email, link);
  });

  it('keeps a two-factor sign-in that is on', async () => {
    const { user, client } = await confirmedUser();
    await t.db.kysely.updateTable('users').set({ two_factor_secret: 'sealed-secret', two_factor_confirmed_at: new Date().toISOString() }).where('id', '=', user.id).execute();
    await client.get('/profile');
    await client.post('/profile/password', { current_password: PASSWORD, password: NEW_PASSWORD, password_confirmation: NEW_PASSWORD });
    assert.equal((await state(user.id)).twoFactorSecret, 'sealed-secret');
  });
});
