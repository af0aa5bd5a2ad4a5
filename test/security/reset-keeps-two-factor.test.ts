// A password reset does not get around two-factor sign-in (ASVS 6.4.3): the reset changes the
// password, signs nobody in, and leaves two-factor on, so the next sign-in still asks for a code;
// the reset ends the sessions and remembered devices that were signed in with both factors.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { TestApp } from '../helpers.js';
import { createUser } from '../helpers.js';
import { WebClient } from '../support/client.js';
import { codeAt, enableTwoFactor, reload } from '../support/two-factor-sign-in.js';
import { linkIn, type MailServer } from '../web/mail-server.js';
import { appWithMail, closeAppWithMail, isLoggedIn } from '../web/support.js';

describe('password reset with two-factor sign-in on', () => {
  let t: TestApp;
  let mail: MailServer;

  before(async () => {
    ({ t, mail } = await appWithMail());
  });
  after(() => closeAppWithMail(t, mail));

  it('changes the password, keeps two-factor on, and the next sign-in still asks for the code', async () => {
    const user = await createUser(t.app, { email: 'two-factor-reset@example.com', password: 'old-password-123' });
    const { secret } = await enableTwoFactor(t.app, user.id);

    const asker = new WebClient(t.app);
    await asker.get('/forgot-password');
    await asker.post('/forgot-password', { email: user.email });
    await t.app.services.mail.settled();
    const link = new URL(linkIn(mail.to(user.email).at(-1)!, `${t.config.appUrl}/reset-password/`));
    const token = decodeURIComponent(link.pathname.split('/').pop()!);

    const resetter = new WebClient(t.app);
    await resetter.get(`${link.pathname}${link.search}`);
    const reset = await resetter.post('/reset-password', { token, email: user.email, password: 'new-password-456', password_confirmation: 'new-password-456' });
    assert.equal(reset.statusCode, 303);
    assert.equal(reset.headers.location, '/login');
    assert.equal(await isLoggedIn(resetter), false, 'the reset signs nobody in');
    assert.notEqual((await reload(t.app, user.id)).two_factor_confirmed_at, null, 'two-factor stays on');

    const client = new WebClient(t.app);
    await client.get('/login');
    const password = await client.post('/login', { email: user.email, password: 'new-password-456' });
    assert.equal(password.statusCode, 303);
    assert.equal(password.headers.location, '/two-factor-challenge');
    assert.equal(await isLoggedIn(client), false, 'the new password alone does not sign in');
    await client.get('/two-factor-challenge');
    const code = await client.post('/two-factor-challenge', { code: await codeAt(secret) });
    assert.equal(code.statusCode, 303);
    assert.equal(await isLoggedIn(client), true);
  });
});
