// /profile: the name with the API's rules (immediate), the email shown with a link to the
// security page (a different one posted here asks for the password and only starts a pending
// change, test/web/email-change.test.ts has the rest), and the password change that signs the
// user out everywhere else and revokes the API tokens.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { REMEMBER_COOKIE } from '../../src/http/web/remember.js';
import { SESSION_COOKIE } from '../../src/plugins/session.js';
import { bearer, createUser, issueToken, type TestApp } from '../helpers.js';
import { WebClient, fieldError, fieldValue, statusMessage } from '../support/client.js';
import { linkIn, type MailServer } from './mail-server.js';
import { appWithMail, closeAppWithMail, confirmAndContinue, isLoggedIn, login, sessionIdOf, sessionRow } from './support.js';

describe('profile', () => {
  let mail: MailServer;
  let t: TestApp;
  let counter = 0;

  before(async () => {
    ({ t, mail } = await appWithMail({ MUST_VERIFY_EMAIL: 'true' }));
    await createUser(t.app, { email: 'taken@example.com' });
  });
  after(() => closeAppWithMail(t, mail));

  const loggedIn = async (extra: Record<string, string> = {}) => {
    counter += 1;
    const user = await createUser(t.app, { name: `Person ${counter}`, email: `person-${counter}@example.com`, password: 'profile-password-1' });
    const client = new WebClient(t.app);
    await login(client, user.email, 'profile-password-1', extra);
    await client.get('/profile');
    return { user, client };
  };

  it('needs a login', async () => {
    const response = await t.app.inject({ url: '/profile' });
    assert.equal(response.statusCode, 302);
    assert.equal(response.headers.location, '/login');
  });

  it('shows both forms, the name filled in, the email with a link to change it on the security page', async () => {
    const { user, client } = await loggedIn();
    const response = await client.get('/profile');
    assert.equal(response.statusCode, 200);
    assert.equal(fieldValue(response.body, 'name'), user.name);
    assert.equal(fieldValue(response.body, 'email'), null, 'no email field: the address changes from the security page');
    assert.ok(response.body.includes(`Your email address is ${user.email}.`));
    assert.match(response.body, /<a href="\/security#security-email-title">Change it on the security page<\/a>/);
    assert.match(response.body, /id="field-current_password"[^>]*autocomplete="current-password"/);
    assert.match(response.body, /id="field-password"[^>]*autocomplete="new-password"/);
  });

  it('changes the name: 303 back with "Saved.", and writes nothing else', async () => {
    const { user, client } = await loggedIn();
    const response = await client.post('/profile', { name: 'New Name', email: user.email, is_admin: '1', email_verified_at: '' });
    assert.equal(response.statusCode, 303);
    assert.equal(response.headers.location, '/profile');
    assert.equal(statusMessage((await client.follow(response)).body), 'Saved.');
    const updated = await t.app.services.users.findById(user.id);
    assert.equal(updated?.name, 'New Name');
    assert.equal(updated?.is_admin, 0);
    assert.notEqual(updated?.email_verified_at, null);
  });

  it('asks for the password before a different email, then only starts a pending change that the mailed link completes, verified', async () => {
    const { user, client } = await loggedIn();
    const next = `new-${user.email}`;
    const detour = await client.post('/profile', { name: user.name, email: next }, { headers: { referer: 'http://localhost:3000/profile' } });
    assert.equal(detour.statusCode, 303);
    assert.equal(detour.headers.location, '/user/confirm-password');
    assert.equal(await t.app.services.emailChanges.pending(user.id), null, 'nothing starts before the password');
    // Once confirmed, the form post goes on (the continuation page), with no second press.
    const response = await confirmAndContinue(client, 'profile-password-1');
    assert.equal(response.statusCode, 303);
    assert.equal(response.headers.location, '/profile');
    assert.equal(statusMessage((await client.follow(response)).body), `We sent a confirmation link to ${next}. Your address changes once you follow it.`);
    const unchanged = await t.app.services.users.findById(user.id);
    assert.equal(unchanged?.email, user.email);
    assert.notEqual(unchanged?.email_verified_at, null, 'the current address stays verified: the pages stay open');
    assert.equal((await client.get('/profile')).statusCode, 200);

    await t.app.services.mail.settled();
    const [message] = mail.to(next);
    assert.ok(message);
    const link = new URL(linkIn(message, 'http://localhost:3000/email/change/'));
    const opened = await client.get(link.pathname);
    assert.equal(opened.statusCode, 200);
    assert.equal((await client.post(link.pathname)).statusCode, 303);
    const updated = await t.app.services.users.findById(user.id);
    assert.equal(updated?.email, next);
    assert.notEqual(updated?.email_verified_at, null);
    assert.equal((await client.get('/profile')).statusCode, 200);
  });

  const invalid: { name: string; form: (email: string) => Record<string, string>; field: string; message: string }[] = [
    { name: 'an empty name', form: (email) => ({ name: '', email }), field: 'name', message: 'The name field is required.' },
    { name: 'a name over 255 characters', form: (email) => ({ name: 'n'.repeat(256), email }), field: 'name', message: 'The name field must not be greater than 255 characters.' },
    { name: 'a malformed email', form: () => ({ name: 'Someone', email: 'nope' }), field: 'email', message: 'The email field must be a valid email address.' },
  ];
  for (const c of invalid) {
    it(`refuses ${c.name} with 422 on ${c.field}, keeping the typed values`, async () => {
      const { user, client } = await loggedIn();
      const form = c.form(user.email);
      const response = await client.post('/profile', form);
      assert.equal(response.statusCode, 422);
      assert.equal(fieldError(response.body, c.field), c.message);
      assert.equal(fieldValue(response.body, 'name'), form.name);
      const unchanged = await t.app.services.users.findById(user.id);
      assert.equal(unchanged?.name, user.name);
      assert.equal(unchanged?.email, user.email);
    });
  }

  it("refuses another user's email, in any case, with 422 on email (password confirmed), and saves nothing, the name included", async () => {
    const { user, client } = await loggedIn();
    await client.get('/user/confirm-password');
    await client.post('/user/confirm-password', { password: 'profile-password-1' });
    await client.get('/profile');
    const response = await client.post('/profile', { name: 'Someone', email: 'Taken@Example.com' });
    assert.equal(response.statusCode, 422);
    assert.equal(fieldError(response.body, 'email'), 'The email has already been taken.');
    const unchanged = await t.app.services.users.findById(user.id);
    assert.equal(unchanged?.name, user.name);
    assert.equal(unchanged?.email, user.email);
    assert.equal(await t.app.services.emailChanges.pending(user.id), null);
  });

  const badPasswords: { name: string; form: Record<string, string>; errors: Record<string, string> }[] = [
    { name: 'a wrong current password', form: { current_password: 'not-it-at-all', password: 'new-password-42', password_confirmation: 'new-password-42' }, errors: { current_password: 'The password is incorrect.' } },
    { name: 'a short new password', form: { current_password: 'profile-password-1', password: 'short', password_confirmation: 'short' }, errors: { password: 'The password field must be at least 8 characters.' } },
    { name: 'a confirmation that differs', form: { current_password: 'profile-password-1', password: 'new-password-42', password_confirmation: 'new-password-43' }, errors: { password: 'The password field confirmation does not match.' } },
    { name: 'a wrong current and a short new password', form: { current_password: 'wrong-wrong', password: 'short', password_confirmation: 'short' }, errors: { current_password: 'The password is incorrect.', password: 'The password field must be at least 8 characters.' } },
    { name: 'an empty current password', form: { current_password: '', password: 'new-password-42', password_confirmation: 'new-password-42' }, errors: { current_password: 'The current password field is required.' } },
  ];
  for (const c of badPasswords) {
    it(`refuses ${c.name} with 422 and keeps the old password`, async () => {
      const { user, client } = await loggedIn();
      const response = await client.post('/profile/password', c.form);
      assert.equal(response.statusCode, 422);
      for (const [field, message] of Object.entries(c.errors)) assert.equal(fieldError(response.body, field), message, field);
      assert.ok(await t.app.services.users.attempt(user.email, 'profile-password-1'));
    });
  }

  it('stops checking the current password after five tries a minute (429), even the right one, and changes nothing', async () => {
    const { user, client } = await loggedIn();
    const change = (current: string) => client.post('/profile/password', { current_password: current, password: 'new-password-42', password_confirmation: 'new-password-42' });
    for (let i = 0; i < 5; i += 1) assert.equal((await change(`wrong-${i}-password`)).statusCode, 422);
    const limited = await change('profile-password-1');
    assert.equal(limited.statusCode, 429);
    assert.ok(Number(limited.headers['retry-after']) > 0);
    assert.match(fieldError(limited.body, 'current_password') ?? '', /Too many/);
    assert.ok(await t.app.services.users.attempt(user.email, 'profile-password-1'), 'the old password still works');
  });

  it('counts the tries per account: another account changes its password meanwhile', async () => {
    const first = await loggedIn();
    for (let i = 0; i < 6; i += 1) await first.client.post('/profile/password', { current_password: `wrong-${i}-password`, password: 'new-password-42', password_confirmation: 'new-password-42' });
    const second = await loggedIn();
    const response = await second.client.post('/profile/password', { current_password: 'profile-password-1', password: 'new-password-42', password_confirmation: 'new-password-42' });
    assert.equal(response.statusCode, 303);
  });

  it('changes the password, keeps this browser logged in under a new session id, and ends every other session and API token', async () => {
    const { user, client } = await loggedIn();
    const elsewhere = new WebClient(t.app);
    await login(elsewhere, user.email, 'profile-password-1');
    const elsewhereId = sessionIdOf(elsewhere);
    const token = await issueToken(t.app, user.email, 'profile-password-1');
    const before = sessionIdOf(client);

    const response = await client.post('/profile/password', { current_password: 'profile-password-1', password: 'changed-password-77', password_confirmation: 'changed-password-77' });
    assert.equal(response.statusCode, 303);
    assert.equal(response.headers.location, '/profile');
    assert.match(statusMessage((await client.follow(response)).body) ?? '', /^Your password has been updated\./);

    assert.equal(await t.app.services.users.attempt(user.email, 'profile-password-1'), null);
    assert.ok(await t.app.services.users.attempt(user.email, 'changed-password-77'));
    assert.notEqual(sessionIdOf(client), before);
    assert.equal(await sessionRow(t.db, before), undefined);
    assert.equal(await isLoggedIn(client), true);
    assert.equal(await sessionRow(t.db, elsewhereId), undefined);
    assert.equal(await isLoggedIn(elsewhere), false);
    assert.equal((await t.app.inject({ url: '/api/user', headers: bearer(token) })).statusCode, 401);
  });

  it('keeps this device remembered after a password change (with a new token), but not the others', async () => {
    const { user, client } = await loggedIn({ remember: '1' });
    const other = new WebClient(t.app);
    await login(other, user.email, 'profile-password-1', { remember: '1' });
    const oldCookie = client.cookies.get(REMEMBER_COOKIE)!;
    await client.post('/profile/password', { current_password: 'profile-password-1', password: 'changed-password-77', password_confirmation: 'changed-password-77' });
    const newCookie = client.cookies.get(REMEMBER_COOKIE)!;
    assert.notEqual(newCookie, oldCookie);
    client.cookies.delete(SESSION_COOKIE);
    assert.equal(await isLoggedIn(client), true, 'this device is still remembered');
    other.cookies.delete(SESSION_COOKIE);
    assert.equal(await isLoggedIn(other), false, 'the other device is not');
  });
});
