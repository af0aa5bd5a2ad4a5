// Safe email changes: the form on the security page asks for the password, then only records a
// pending change; the link mailed to the new address opens a page whose button makes the change
// (verified); the old address is told and its link cancels it; links expire after 60 minutes,
// work once, and refuse a tampered token or an address taken since.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { createUser, type TestApp } from '../helpers.js';
import { WebClient, alertText, decodeEntities, fieldError, statusMessage } from '../support/client.js';
import { linkIn, type MailServer, type ReceivedMail } from './mail-server.js';
import { appWithMail, closeAppWithMail, confirmAndContinue, login, mainOf } from './support.js';

const APP = 'http://localhost:3000';

describe('email change', () => {
  let mail: MailServer;
  let t: TestApp;
  let counter = 0;

  before(async () => {
    ({ t, mail } = await appWithMail({ MUST_VERIFY_EMAIL: 'true', LOG_LEVEL: 'error' }));
  });
  after(() => closeAppWithMail(t, mail));

  const signedIn = async (options: { confirmed?: boolean; locale?: string } = {}) => {
    counter += 1;
    const user = await createUser(t.app, { email: `owner-${counter}@example.com`, password: 'change-password-1' });
    if (options.locale !== undefined) await t.db.kysely.updateTable('users').set({ locale: options.locale }).where('id', '=', user.id).execute();
    const client = new WebClient(t.app);
    await login(client, user.email, 'change-password-1');
    if (options.confirmed !== false) {
      await client.get('/user/confirm-password');
      const confirmed = await client.post('/user/confirm-password', { password: 'change-password-1' });
      assert.equal(confirmed.statusCode, 303);
    }
    await client.get('/security');
    return { user, client };
  };

  const mailTo = async (address: string, count = 1): Promise<ReceivedMail> => {
    await t.app.services.mail.settled();
    const messages = mail.to(address);
    assert.ok(messages.length >= count, `${count} mail(s) to ${address}, got ${messages.length}`);
    return messages[count - 1]!;
  };

  const path = (link: string) => {
    const url = new URL(link);
    return `${url.pathname}${url.search}`;
  };

  const emailOf = async (id: number) => (await t.app.services.users.findById(id))?.email;

  /** Opens a link's page, then presses its button (as the user does). */
  const follow = async (client: WebClient, link: string) => {
    const page = await client.get(path(link));
    assert.equal(page.statusCode, 200, page.body);
    return client.post(path(link));
  };

  it('asks for the password before a change starts, then starts it without a second press', async () => {
    const { user, client } = await signedIn({ confirmed: false });
    const response = await client.post('/user/email', { email: `next-${user.email}` }, { headers: { referer: `${APP}/security` } });
    assert.equal(response.statusCode, 303);
    assert.equal(response.headers.location, '/user/confirm-password');
    assert.equal(await t.db.kysely.selectFrom('email_changes').select('id').where('user_id', '=', user.id).executeTakeFirst(), undefined);
    const started = await confirmAndContinue(client, 'change-password-1');
    assert.equal(started.headers.location, '/security');
    assert.ok(await t.db.kysely.selectFrom('email_changes').select('id').where('user_id', '=', user.id).executeTakeFirst());
  });

  it('changes nothing until the link is followed; the page of the link and its button make the change, verified', async () => {
    const { user, client } = await signedIn();
    const next = `next-${user.email}`;
    const response = await client.post('/user/email', { email: next });
    assert.equal(response.statusCode, 303);
    assert.equal(response.headers.location, '/security');
    const page = await client.follow(response);
    assert.equal(decodeEntities(statusMessage(page.body) ?? ''), `We sent a confirmation link to ${next}. Your address changes once you follow it.`);
    assert.match(decodeEntities(mainOf(page.body)), new RegExp(`Waiting for confirmation: ${next}`));
    assert.equal(await emailOf(user.id), user.email, 'the address is unchanged');

    const message = await mailTo(next);
    assert.equal(message.subject, 'Confirm your new email address');
    const link = linkIn(message, `${APP}/email/change/`);
    // Opening the link (a mail scanner's prefetch) changes nothing.
    const opened = await client.get(path(link));
    assert.equal(opened.statusCode, 200);
    assert.match(decodeEntities(mainOf(opened.body)), new RegExp(`Use ${next} as the email address of this account\\?`));
    assert.equal(await emailOf(user.id), user.email);

    // Verified long ago: following the link must verify the new address now.
    await t.db.kysely.updateTable('users').set({ email_verified_at: '2020-01-01T00:00:00.000Z' }).where('id', '=', user.id).execute();
    const confirmedAt = Date.now();
    const confirmed = await client.post(path(link));
    assert.equal(confirmed.statusCode, 303);
    assert.equal(confirmed.headers.location, '/security');
    assert.equal(decodeEntities(statusMessage((await client.follow(confirmed)).body) ?? ''), `Your email address is now ${next}.`);
    const updated = await t.app.services.users.findById(user.id);
    assert.equal(updated?.email, next);
    assert.ok(Date.parse(updated?.email_verified_at ?? '') >= confirmedAt - 1000, 'following the link proved the address, now');
    assert.equal(await t.db.kysely.selectFrom('email_changes').select('id').where('user_id', '=', user.id).executeTakeFirst(), undefined);

    // The link works once.
    const again = await client.get(path(link));
    assert.equal(again.statusCode, 404);
    assert.equal(alertText(again.body), 'This link is invalid or has already been used.');
  });

  it('shows the section in French to a French user: the current address, the pending one, the form', async () => {
    const { user, client } = await signedIn({ locale: 'fr' });
    await client.post('/user/email', { email: `fr-${user.email}` });
    const main = decodeEntities(mainOf((await client.get('/security')).body));
    assert.match(main, /<h2 id="security-email-title">Adresse e-mail<\/h2>/);
    assert.ok(main.includes(`Adresse actuelle : <strong data-testid="current-email">${user.email}</strong>`));
    assert.ok(main.includes(`En attente de confirmation : fr-${user.email}`));
    assert.match(main, /<label for="field-email">Nouvelle adresse e-mail<\/label>/);
  });

  it('works from another browser that is not signed in (the new mailbox read elsewhere), then sends it to the login', async () => {
    const { user, client } = await signedIn();
    await client.post('/user/email', { email: `elsewhere-${user.email}` });
    const link = linkIn(await mailTo(`elsewhere-${user.email}`), `${APP}/email/change/`);
    const response = await follow(new WebClient(t.app), link);
    assert.equal(response.statusCode, 303);
    assert.equal(response.headers.location, '/login');
    assert.equal(await emailOf(user.id), `elsewhere-${user.email}`);
  });

  it('tells the old address, in the user\'s language, with a link that cancels the change', async () => {
    const { user, client } = await signedIn({ locale: 'fr' });
    const next = `cancelled-${user.email}`;
    await client.post('/user/email', { email: next });
    const notice = await mailTo(user.email);
    assert.equal(notice.subject, "Demande de changement d'adresse e-mail");
    assert.match(notice.text, new RegExp(`remplacer l'adresse e-mail de votre compte par ${next}`));
    assert.equal((await mailTo(next)).subject, 'Confirmez votre nouvelle adresse e-mail');
    const cancel = linkIn(notice, `${APP}/email/change/`);
    assert.match(cancel, /\/cancel\//);

    const stranger = new WebClient(t.app);
    const page = await stranger.get(path(cancel));
    assert.equal(page.statusCode, 200);
    assert.ok(await t.app.services.emailChanges.pending(user.id), 'opening the page cancels nothing');
    const response = await stranger.post(path(cancel));
    assert.equal(response.statusCode, 303);
    assert.equal(await t.app.services.emailChanges.pending(user.id), null);

    const confirm = await new WebClient(t.app).get(path(linkIn(await mailTo(next), `${APP}/email/change/`)));
    assert.equal(confirm.statusCode, 404, 'the confirmation link is dead');
    assert.equal(await emailOf(user.id), user.email);
  });

  it('refuses an expired link with 410, and its button changes nothing', async () => {
    const { user, client } = await signedIn();
    await client.post('/user/email', { email: `late-${user.email}` });
    const link = linkIn(await mailTo(`late-${user.email}`), `${APP}/email/change/`);
    const page = await client.get(path(link));
    await t.db.kysely.updateTable('email_changes').set({ expires_at: new Date(Date.now() - 1000).toISOString() }).where('user_id', '=', user.id).execute();
    const response = await client.post(path(link));
    assert.equal(response.statusCode, 410);
    assert.equal(alertText(response.body), 'This link has expired. Ask for the change again from the security page.');
    assert.equal(page.statusCode, 200);
    assert.equal((await client.get(path(link))).statusCode, 410);
    assert.equal(await emailOf(user.id), user.email);
  });

  it('sets the link lifetime to 60 minutes', async () => {
    const { user, client } = await signedIn();
    const before = Date.now();
    await client.post('/user/email', { email: `lifetime-${user.email}` });
    const pending = await t.app.services.emailChanges.pending(user.id);
    const minutes = (pending!.expiresAt.getTime() - before) / 60_000;
    assert.ok(minutes > 59.9 && minutes <= 60.01, String(minutes));
    assert.match((await mailTo(`lifetime-${user.email}`)).text, /This link will expire in 60 minutes\./);
  });

  it('refuses an address another account took since the request (in any case) with 422, and keeps the change pending', async () => {
    const { user, client } = await signedIn();
    const next = `contested-${user.email}`;
    await client.post('/user/email', { email: next });
    const link = linkIn(await mailTo(next), `${APP}/email/change/`);
    await createUser(t.app, { email: next.toUpperCase() });
    await client.get(path(link));
    const response = await client.post(path(link));
    assert.equal(response.statusCode, 422);
    assert.equal(alertText(response.body), 'The email has already been taken.');
    assert.equal(await emailOf(user.id), user.email);
  });

  const tampered: { name: string; change: (link: string) => string }[] = [
    { name: 'a changed token', change: (link) => link.replace(/.$/, (c) => (c === 'a' ? 'b' : 'a')) },
    { name: 'the cancel token in the confirm link', change: (link) => link },
    { name: 'another change id', change: (link) => link.replace(/\/email\/change\/(\d+)\//, (_m, id: string) => `/email/change/${Number(id) + 1000}/`) },
    { name: 'a malformed token', change: (link) => `${link.slice(0, link.lastIndexOf('/'))}/not-a-token` },
  ];
  for (const c of tampered) {
    it(`refuses ${c.name} with 404 and changes nothing`, async () => {
      const { user, client } = await signedIn();
      await client.post('/user/email', { email: `tampered-${user.email}` });
      const confirm = linkIn(await mailTo(`tampered-${user.email}`), `${APP}/email/change/`);
      const cancelToken = linkIn(await mailTo(user.email), `${APP}/email/change/`).split('/').pop()!;
      const link = c.name.startsWith('the cancel') ? `${confirm.slice(0, confirm.lastIndexOf('/'))}/${cancelToken}` : c.change(confirm);
      assert.notEqual(link, confirm);
      assert.equal((await client.get(path(link))).statusCode, 404);
      await client.get('/security');
      assert.equal((await client.post(path(link))).statusCode, 404);
      assert.equal(await emailOf(user.id), user.email);
      assert.ok(await t.app.services.emailChanges.pending(user.id));
    });
  }

  it('answers a script asking for JSON with the error envelope for a dead link', async () => {
    const client = new WebClient(t.app);
    const response = await client.get(`/email/change/99999/${'a'.repeat(40)}`, { accept: 'application/json' });
    assert.equal(response.statusCode, 404);
    assert.deepEqual(response.json(), { message: 'This link is invalid or has already been used.', errors: {} });
  });

  it('replaces the older pending change with a second request: the first link is dead', async () => {
    const { user, client } = await signedIn();
    await client.post('/user/email', { email: `first-${user.email}` });
    await client.get('/security');
    await client.post('/user/email', { email: `second-${user.email}` });
    const first = linkIn(await mailTo(`first-${user.email}`), `${APP}/email/change/`);
    const second = linkIn(await mailTo(`second-${user.email}`), `${APP}/email/change/`);
    assert.equal((await client.get(path(first))).statusCode, 404);
    assert.equal(Number((await t.db.kysely.selectFrom('email_changes').select((eb) => eb.fn.countAll().as('n')).where('user_id', '=', user.id).executeTakeFirst())?.n), 1);
    assert.equal((await follow(client, second)).statusCode, 303);
    assert.equal(await emailOf(user.id), `second-${user.email}`);
  });

  it('withdraws the pending change with the button on the security page', async () => {
    const { user, client } = await signedIn();
    await client.post('/user/email', { email: `withdrawn-${user.email}` });
    const page = await client.get('/security');
    assert.match(page.body, /action="\/user\/email\/cancel"/);
    const response = await client.post('/user/email/cancel');
    assert.equal(response.statusCode, 303);
    assert.equal(await t.app.services.emailChanges.pending(user.id), null);
    assert.doesNotMatch((await client.follow(response)).body, /action="\/user\/email\/cancel"/);
  });

  it('refuses an empty or malformed form with 422 before asking for the password', async () => {
    const { client } = await signedIn({ confirmed: false });
    const response = await client.post('/user/email', { email: 'not an address' });
    assert.equal(response.statusCode, 422);
    assert.equal(fieldError(response.body, 'email'), 'The email field must be a valid email address.');
    const script = await client.postJson('/user/email', { email: 'someone-new@example.com' });
    assert.equal(script.statusCode, 423, 'a valid one still needs the password');
  });

  const refused: { name: string; email: (own: string) => string; message: string }[] = [
    { name: "another account's address, in any case", email: () => 'Someone-Taken@Example.com', message: 'The email has already been taken.' },
    { name: 'a malformed address', email: () => 'nope', message: 'The email field must be a valid email address.' },
  ];
  for (const c of refused) {
    it(`refuses ${c.name} with 422 on the security page, and starts nothing`, async () => {
      await t.app.services.users.findByEmail('someone-taken@example.com').then((found) => found ?? createUser(t.app, { email: 'someone-taken@example.com' }));
      const { user, client } = await signedIn();
      const response = await client.post('/user/email', { email: c.email(user.email) });
      assert.equal(response.statusCode, 422);
      assert.equal(fieldError(response.body, 'email'), c.message);
      assert.equal(await t.app.services.emailChanges.pending(user.id), null);
    });
  }

  it('starts the same pending change from the profile form, keeping the name change immediate', async () => {
    const { user, client } = await signedIn();
    await client.get('/profile');
    const response = await client.post('/profile', { name: 'Renamed Now', email: `profile-${user.email}` });
    assert.equal(response.statusCode, 303);
    const updated = await t.app.services.users.findById(user.id);
    assert.equal(updated?.name, 'Renamed Now');
    assert.equal(updated?.email, user.email);
    assert.equal((await t.app.services.emailChanges.pending(user.id))?.newEmail, `profile-${user.email}`);
  });
});
