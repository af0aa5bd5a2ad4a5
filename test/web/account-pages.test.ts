// Account pages that finish what they start (issue 27 §6): an action that asked for the password
// goes on once it is confirmed, checked again as any form; an unverified user sees a banner that
// sends the link, on the dashboard and the profile; the profile says it changes the name only.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { sessionHandle } from '../../src/modules/sessions/browser-sessions.service.js';
import { createUser, type TestApp } from '../helpers.js';
import type { MailServer } from './mail-server.js';
import { WebClient, decodeEntities, statusMessage } from '../support/client.js';
import { appWithMail, closeAppWithMail, confirmAndContinue, continuation, isLoggedIn, login, mainOf, sessionIdOf } from './support.js';

const PASSWORD = 'account-pages-password-1';
const MAC_CHROME = 'Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_7) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36';

describe('account pages finish what they start', () => {
  let t: TestApp;
  let mail: MailServer;

  before(async () => {
    ({ t, mail } = await appWithMail());
  });
  after(() => closeAppWithMail(t, mail));

  const signedIn = async (fields: { verified?: boolean } = {}, headers: Record<string, string> = {}) => {
    const user = await createUser(t.app, { password: PASSWORD, ...fields });
    const client = new WebClient(t.app, { headers });
    await login(client, user.email, PASSWORD);
    return { user, client };
  };

  describe('after the password confirmation', () => {
    it('turns two-factor sign-in on without a second press of Enable', async () => {
      const { user, client } = await signedIn();
      await client.get('/security');
      const asked = await client.post('/user/two-factor');
      assert.equal(asked.headers.location, '/user/confirm-password');
      assert.equal(await t.app.services.twoFactor.pendingSetup((await t.app.services.users.findById(user.id))!), null, 'nothing began before the password');
      const enabled = await confirmAndContinue(client, PASSWORD);
      assert.equal(enabled.headers.location, '/security#two-factor');
      assert.ok(await t.app.services.twoFactor.pendingSetup((await t.app.services.users.findById(user.id))!));
      assert.match(mainOf((await client.get('/security')).body), /role="img" aria-label="QR code to scan with an authenticator app"/);
    });

    it('logs out the other browser sessions without a second press, and says so', async () => {
      const { user, client } = await signedIn({}, { 'user-agent': MAC_CHROME });
      const other = new WebClient(t.app);
      await login(other, user.email, PASSWORD);
      await client.get('/security');
      assert.equal((await client.post('/user/sessions/others')).headers.location, '/user/confirm-password');
      assert.ok(await isLoggedIn(other), 'nothing ended before the password');
      const ended = await confirmAndContinue(client, PASSWORD);
      assert.equal(ended.headers.location, '/security');
      assert.equal(decodeEntities(statusMessage((await client.follow(ended)).body) ?? ''), 'Your other browser sessions have been logged out.');
      assert.equal(await isLoggedIn(other), false);
      assert.ok(await isLoggedIn(client));
    });

    it('ends the one session asked for, its field carried through the confirmation', async () => {
      const { user, client } = await signedIn();
      const other = new WebClient(t.app);
      await login(other, user.email, PASSWORD);
      const third = new WebClient(t.app);
      await login(third, user.email, PASSWORD);
      await client.get('/security');
      await client.post('/user/sessions/end', { session: sessionHandle(sessionIdOf(other)!) });
      const ended = await confirmAndContinue(client, PASSWORD);
      assert.equal(decodeEntities(statusMessage((await client.follow(ended)).body) ?? ''), 'That browser session has been ended.');
      assert.equal(await isLoggedIn(other), false);
      assert.ok(await isLoggedIn(third), 'only the session asked for');
    });

    it('checks the continued post as any form: without its fresh CSRF token it does nothing (419)', async () => {
      const { user, client } = await signedIn();
      await client.get('/security');
      await client.post('/user/two-factor');
      await client.get('/user/confirm-password');
      const confirmed = await client.post('/user/confirm-password', { password: PASSWORD });
      const form = continuation((await client.follow(confirmed)).body);
      assert.deepEqual(form, { action: '/user/two-factor', fields: {}, cancel: '/security' });
      assert.equal((await client.post(form.action, form.fields, { token: 'forged' })).statusCode, 419);
      assert.equal(await t.app.services.twoFactor.pendingSetup((await t.app.services.users.findById(user.id))!), null);
    });

    it('says so in French', async () => {
      const { client } = await signedIn({}, { 'accept-language': 'fr' });
      await client.get('/security');
      await client.post('/user/two-factor');
      await client.get('/user/confirm-password');
      const page = await client.follow(await client.post('/user/confirm-password', { password: PASSWORD }));
      assert.match(page.body, /<h1 id="page-title">Mot de passe confirmé<\/h1>/);
      assert.match(page.body, /<button type="submit" class="button">Continuer<\/button>/);
    });
  });

  describe('an unverified email address', () => {
    it('shows a banner that sends the link on the dashboard and the profile, and none once verified', async () => {
      const { user, client } = await signedIn({ verified: false });
      for (const path of ['/dashboard', '/profile']) {
        const main = decodeEntities(mainOf((await client.get(path)).body));
        assert.match(main, new RegExp(`Your email address, ${user.email}, is not verified yet\\.`), path);
        assert.match(main, /<form method="post" action="\/email\/verification-notification" class="inline-form">[\s\S]*?>Send the link<\/button>/, path);
      }
      const verified = await signedIn();
      for (const path of ['/dashboard', '/profile']) assert.doesNotMatch(mainOf((await verified.client.get(path)).body), /data-unverified-banner/, path);
    });

    it('sends the link from the banner and comes back to the page it was pressed on', async () => {
      const { user, client } = await signedIn({ verified: false });
      await client.get('/profile');
      const sent = await client.post('/email/verification-notification', {}, { headers: { referer: `${t.config.appUrl}/profile` } });
      assert.equal(sent.statusCode, 303);
      assert.equal(sent.headers.location, '/profile');
      assert.equal(decodeEntities(statusMessage((await client.follow(sent)).body) ?? ''), `A verification link has been sent to ${user.email}. It is valid for 60 minutes.`);
      await t.app.services.mail.settled();
      assert.equal(mail.to(user.email).at(-1)?.subject, 'Verify email address');
    });

    it('says on /email/verify what will be sent, never that a link was just emailed', async () => {
      const { user, client } = await signedIn({ verified: false }, { 'accept-language': 'fr' });
      const main = decodeEntities(mainOf((await client.get('/email/verify')).body));
      assert.match(main, new RegExp(`Pour vérifier votre adresse e-mail, ${user.email}, ouvrez le lien que nous y envoyons\\.`));
      assert.match(main, />Envoyer le lien<\/button>/);
      assert.doesNotMatch(main, /venons de vous envoyer/);
    });
  });

  describe('the profile', () => {
    it('says it changes the name, and sends the email address to the security page', async () => {
      const { user, client } = await signedIn();
      const main = decodeEntities(mainOf((await client.get('/profile')).body));
      assert.match(main, /The name shown on your account\./);
      assert.doesNotMatch(main, /profile information and email address/);
      assert.doesNotMatch(main, /name="email"/);
      assert.match(main, new RegExp(`Your email address is ${user.email}\\. <a href="/security#security-email-title">Change it on the security page</a>`));
    });
  });
});
