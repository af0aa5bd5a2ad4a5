// Forgotten passwords: the same answer for any address, a mailed single-use link valid 60
// minutes (token stored hashed), one mail a minute per address, and a reset that signs the user
// out of every session, device and API token. Mail goes to a real SMTP server on loopback.
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { REMEMBER_COOKIE } from '../../src/http/web/remember.js';
import { buildApp } from '../../src/app.js';
import { bearer, createTestDatabase, createUser, issueToken, testConfig, type TestApp } from '../helpers.js';
import { WebClient, alertText, fieldError, fieldValue, statusMessage } from '../support/client.js';
import { linkIn, type MailServer } from './mail-server.js';
import { appWithMail, closeAppWithMail, isLoggedIn, login, sessionIdOf, sessionRow } from './support.js';

const sha256 = (text: string) => createHash('sha256').update(text).digest('hex');
const SENT = 'If an account exists for that email address, we have emailed a password reset link to it.';
const INVALID = 'This password reset token is invalid.';

describe('password reset', () => {
  let mail: MailServer;
  let t: TestApp;
  let counter = 0;

  before(async () => {
    ({ t, mail } = await appWithMail());
  });
  after(() => closeAppWithMail(t, mail));

  const newUser = async () => {
    counter += 1;
    return createUser(t.app, { email: `reset-${counter}@example.com`, password: 'old-password-123' });
  };

  const askForLink = async (email: string, client = new WebClient(t.app)) => {
    await client.get('/forgot-password');
    const response = await client.post('/forgot-password', { email });
    await t.app.services.mail.settled();
    return { client, response };
  };

  /** Asks for a link and returns the token and email read from the delivered mail. */
  const mailedLink = async (email: string) => {
    await askForLink(email);
    const messages = mail.to(email);
    const link = new URL(linkIn(messages[messages.length - 1]!, 'http://localhost:3000/reset-password/'));
    return { link, token: decodeURIComponent(link.pathname.split('/').pop()!), email: link.searchParams.get('email')! };
  };

  const reset = async (form: Record<string, string>) => {
    const client = new WebClient(t.app);
    await client.get(`/reset-password/${encodeURIComponent(form.token ?? 'x')}?email=${encodeURIComponent(form.email ?? '')}`);
    return { client, response: await client.post('/reset-password', form) };
  };

  it('shows the forgot-password form', async () => {
    const response = await new WebClient(t.app).get('/forgot-password');
    assert.equal(response.statusCode, 200);
    assert.match(response.body, /<label for="field-email">Email<\/label>/);
    assert.match(response.body, /action="\/forgot-password"/);
  });

  it('answers an existing and an unknown address alike: 303 back, the same neutral message', async () => {
    const user = await newUser();
    const known = await askForLink(user.email);
    const unknown = await askForLink('nobody-here@example.com');
    for (const { client, response } of [known, unknown]) {
      assert.equal(response.statusCode, 303);
      assert.equal(response.headers.location, '/forgot-password');
      const page = await client.follow(response);
      assert.equal(statusMessage(page.body), SENT);
    }
    const strip = (html: string) => html.replace(/name="_token" value="[^"]+"/g, '');
    assert.equal(strip((await known.client.get('/forgot-password')).body), strip((await unknown.client.get('/forgot-password')).body));
    assert.equal(mail.to('nobody-here@example.com').length, 0);
  });

  it('mails {APP_URL}/reset-password/{token}?email=… with text and HTML parts, and stores only the SHA-256 of the token', async () => {
    const user = await newUser();
    const { link, token, email } = await mailedLink(user.email);
    assert.equal(link.origin, 'http://localhost:3000');
    assert.equal(email, user.email);
    assert.ok(token.length >= 40, 'a long random token');
    const [message] = mail.to(user.email);
    assert.equal(message?.subject, 'Reset password notification');
    assert.match(message?.text ?? '', /This password reset link will expire in 60 minutes\./);
    assert.ok(message?.html.includes(`href="${link.href.replace(/&/g, '&amp;')}"`), 'the HTML part links the same URL');
    const row = await t.db.kysely.selectFrom('password_reset_tokens').selectAll().where('email', '=', user.email).executeTakeFirstOrThrow();
    assert.equal(row.token, sha256(token));
    assert.ok(!JSON.stringify(row).includes(token));
  });

  it('sends at most one mail per address per 60 seconds, still answering the same', async () => {
    const user = await newUser();
    await askForLink(user.email);
    const second = await askForLink(user.email);
    assert.equal(second.response.statusCode, 303);
    assert.equal(mail.to(user.email).length, 1);
    await t.db.kysely.updateTable('password_reset_tokens').set({ created_at: new Date(Date.now() - 61_000).toISOString() }).where('email', '=', user.email).execute();
    await askForLink(user.email);
    assert.equal(mail.to(user.email).length, 2);
  });

  it('mails a French visitor in French', async () => {
    const user = await newUser();
    await askForLink(user.email, new WebClient(t.app, { headers: { 'accept-language': 'fr' } }));
    const [message] = mail.to(user.email);
    assert.equal(message?.subject, 'Notification de réinitialisation du mot de passe');
    assert.match(message?.text ?? '', /Ce lien de réinitialisation du mot de passe expirera dans 60 minutes\./);
  });

  it('refuses a malformed address with 422 on email', async () => {
    const { response } = await askForLink('not-an-email');
    assert.equal(response.statusCode, 422);
    assert.equal(fieldError(response.body, 'email'), 'The email field must be a valid email address.');
  });

  it('shows the reset form with the token hidden and the email filled in', async () => {
    const user = await newUser();
    const { link, token } = await mailedLink(user.email);
    const response = await new WebClient(t.app).get(`${link.pathname}${link.search}`);
    assert.equal(response.statusCode, 200);
    assert.ok(response.body.includes(`name="token" value="${token}"`));
    assert.equal(fieldValue(response.body, 'email'), user.email);
  });

  it('resets the password: 303 to /login with a status, the old password dead, the new one working', async () => {
    const user = await newUser();
    const { token, email } = await mailedLink(user.email);
    const { client, response } = await reset({ token, email, password: 'brand-new-password-9', password_confirmation: 'brand-new-password-9' });
    assert.equal(response.statusCode, 303);
    assert.equal(response.headers.location, '/login');
    assert.equal(statusMessage((await client.follow(response)).body), 'Your password has been reset.');
    assert.equal(await t.app.services.users.attempt(user.email, 'old-password-123'), null);
    assert.ok(await t.app.services.users.attempt(user.email, 'brand-new-password-9'));
  });

  it('ends every session, remembered device and API token of the user', async () => {
    const user = await newUser();
    const browser = new WebClient(t.app);
    await login(browser, user.email, 'old-password-123', { remember: '1' });
    const sessionId = sessionIdOf(browser);
    const apiToken = await issueToken(t.app, user.email, 'old-password-123');
    assert.equal((await t.app.inject({ url: '/api/user', headers: bearer(apiToken) })).statusCode, 200);

    const { token, email } = await mailedLink(user.email);
    const { response } = await reset({ token, email, password: 'brand-new-password-9', password_confirmation: 'brand-new-password-9' });
    assert.equal(response.statusCode, 303);

    assert.equal(await sessionRow(t.db, sessionId), undefined, 'the session row is deleted');
    const restarted = new WebClient(t.app);
    restarted.cookies.set(REMEMBER_COOKIE, browser.cookies.get(REMEMBER_COOKIE)!);
    assert.equal(await isLoggedIn(browser), false);
    assert.equal(await isLoggedIn(restarted), false, 'the remember cookie is dead too');
    assert.equal((await t.app.inject({ url: '/api/user', headers: bearer(apiToken) })).statusCode, 401);
  });

  it('accepts a token only once', async () => {
    const user = await newUser();
    const { token, email } = await mailedLink(user.email);
    const form = { token, email, password: 'brand-new-password-9', password_confirmation: 'brand-new-password-9' };
    assert.equal((await reset(form)).response.statusCode, 303);
    const again = await reset({ ...form, password: 'third-password-77', password_confirmation: 'third-password-77' });
    assert.equal(again.response.statusCode, 422);
    assert.equal(fieldError(again.response.body, 'email'), INVALID);
    assert.ok(await t.app.services.users.attempt(user.email, 'brand-new-password-9'));
  });

  it('refuses a token older than 60 minutes with 422 and says it expired', async () => {
    const user = await newUser();
    const { token, email } = await mailedLink(user.email);
    await t.db.kysely.updateTable('password_reset_tokens').set({ created_at: new Date(Date.now() - 61 * 60_000).toISOString() }).where('email', '=', user.email).execute();
    const { response } = await reset({ token, email, password: 'brand-new-password-9', password_confirmation: 'brand-new-password-9' });
    assert.equal(response.statusCode, 422);
    assert.equal(fieldError(response.body, 'email'), 'This password reset link has expired. Please ask for a new one.');
    assert.ok(await t.app.services.users.attempt(user.email, 'old-password-123'), 'the password is unchanged');
  });

  const refused: { name: string; form: (link: { token: string; email: string }) => Record<string, string>; field: string; message: string }[] = [
    { name: 'a wrong token', form: ({ email }) => ({ token: 'x'.repeat(43), email }), field: 'email', message: INVALID },
    { name: 'the token of another address', form: ({ token }) => ({ token, email: 'reset-1@example.com' }), field: 'email', message: INVALID },
    { name: 'an address with no account', form: ({ token }) => ({ token, email: 'ghost@example.com' }), field: 'email', message: INVALID },
    { name: 'a missing token', form: ({ email }) => ({ email }), field: 'token', message: 'The token field is required.' },
    { name: 'a short new password', form: (link) => ({ ...link, password: 'short', password_confirmation: 'short' }), field: 'password', message: 'The password field must be at least 8 characters.' },
    { name: 'a confirmation that differs', form: (link) => ({ ...link, password_confirmation: 'different-password-1' }), field: 'password', message: 'The password field confirmation does not match.' },
  ];
  for (const c of refused) {
    it(`refuses ${c.name} with 422 and leaves the password unchanged`, async () => {
      const user = await newUser();
      const link = await mailedLink(user.email);
      const form = { password: 'brand-new-password-9', password_confirmation: 'brand-new-password-9', ...c.form(link) };
      const { response } = await reset(form);
      assert.equal(response.statusCode, 422);
      assert.equal(c.field === 'token' ? alertText(response.body) : fieldError(response.body, c.field), c.message);
      assert.ok(await t.app.services.users.attempt(user.email, 'old-password-123'));
    });
  }
});

describe('password reset with the mail server down', () => {
  let t: TestApp;
  const lines: string[] = [];

  before(async () => {
    // Port 1 on loopback: nothing listens, the connection is refused at once.
    const database = await createTestDatabase();
    const config = testConfig({ MAIL_MAILER: 'smtp', MAIL_HOST: '127.0.0.1', MAIL_PORT: '1', LOG_LEVEL: 'info' });
    const app = await buildApp(config, { db: database.db, loggerStream: { write: (line) => void lines.push(line) } });
    await app.ready();
    t = { app, db: database.db, config, close: async () => (await app.close(), await database.drop()) };
  });
  after(() => t.close());

  it('answers exactly as usual (no 500, no hint) and logs the failure without the link', async () => {
    const user = await createUser(t.app, { email: 'down@example.com' });
    const client = new WebClient(t.app);
    await client.get('/forgot-password');
    const response = await client.post('/forgot-password', { email: user.email });
    assert.equal(response.statusCode, 303);
    assert.equal(statusMessage((await client.follow(response)).body), SENT);
    await t.app.services.mail.settled();
    const failure = lines.map((line) => JSON.parse(line) as Record<string, unknown>).find((entry) => entry.msg === 'mail delivery failed');
    assert.ok(failure, 'the failure is logged');
    assert.equal(failure.to, user.email);
    assert.equal(failure.subject, 'Reset password notification');
    assert.ok(!lines.join('\n').includes('/reset-password/'), 'no link in any log line');
    const row = await t.db.kysely.selectFrom('password_reset_tokens').select('token').where('email', '=', user.email).executeTakeFirstOrThrow();
    assert.ok(!lines.join('\n').includes(row.token));
  });
});
