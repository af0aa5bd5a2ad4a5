// The new-device alert quotes what the client said about itself (the token's device_name, the
// user agent) as data: one line, cut short, in quotes, links defanged, in the text and the
// HTML parts. A device name is any 255 characters an attacker chooses; written as-is it made the
// mail say "SECURITY TEAM: this sign-in was blocked. Re-verify … at https://evil.example/verify".
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { MAIL_TEXT_MAX, mailSafeText } from '../../src/modules/alerts/device.js';
import { createUser, type TestApp } from '../helpers.js';
import type { MailServer } from './mail-server.js';
import { appWithMail, closeAppWithMail, login } from './support.js';
import { characters, WebClient } from '../support/client.js';

const PASSWORD = 'device-password-1';
const MALICIOUS = 'laptop".\n\nSECURITY TEAM: this sign-in was blocked. Re-verify your account within 24 hours at https://evil.example/verify or it will be closed.';

/** Every place a mail client would make a link of evil.example. */
const LINKABLE = /(https?:\/\/|www\.)\S*evil|evil\.example|evil%2eexample/i;

describe('the text of a new-device alert', () => {
  it('makes a device name one short line of data', () => {
    const safe = mailSafeText(MALICIOUS);
    assert.ok(!/[\r\n\t]/.test(safe), safe);
    assert.ok([...safe].length <= MAIL_TEXT_MAX, safe);
    assert.ok(safe.endsWith('…'), 'a cut name says it was cut');
    assert.ok(!safe.includes('"'), 'no quote of its own to close the quotation');
    assert.equal(mailSafeText('build-server'), 'build-server');
    assert.equal(mailSafeText('  my\u2028phone\u202e\u0000 '), 'my phone');
  });

  it('defangs anything a mail client would turn into a link', () => {
    for (const name of ['see https://evil.example/verify', 'www.evil.example', 'evil.example', 'HTTP://EVIL.EXAMPLE', 'mail bob@evil.example', 'evil。example']) {
      const safe = mailSafeText(name);
      assert.ok(!LINKABLE.test(safe) && !safe.includes('。'), `${name} → ${safe}`);
    }
    assert.equal(mailSafeText('Firefox 133.0 / Ubuntu 24.04'), 'Firefox 133.0 / Ubuntu 24.04', 'version numbers stay');
  });
});

describe('the new-device alert mail', () => {
  let mail: MailServer;
  let t: TestApp;
  before(async () => {
    ({ t, mail } = await appWithMail());
  });
  after(() => closeAppWithMail(t, mail));

  it('quotes a hostile device_name as one cut, defanged line, in the text and the HTML', async () => {
    const user = await createUser(t.app, { email: 'hostile-device@example.com', password: PASSWORD });
    await login(new WebClient(t.app), user.email, PASSWORD);
    const issued = await t.app.inject({
      method: 'POST',
      url: '/api/tokens',
      headers: { 'user-agent': `curl/8.5.0 (see https://evil.example/ua)`, accept: 'application/json' },
      payload: { email: user.email, password: PASSWORD, device_name: MALICIOUS },
    });
    assert.equal(issued.statusCode, 200);
    await t.app.services.mail.settled();
    const [alert] = mail.to(user.email).filter((message) => message.subject === 'New sign-in to your account');
    assert.ok(alert, 'an alert was sent');
    const lines = alert.text.split(/\r?\n/);
    assert.ok(!lines.some((line) => /^\s*SECURITY TEAM/.test(line)), alert.text);
    const device = lines.find((line) => line.startsWith('Device: '));
    assert.ok(device, alert.text);
    assert.match(characters(device), /^Device: “laptop'\. SECURITY TEAM: this sign-in was blocked\. [^”]*…”/);
    assert.ok(!/Re-verify your account within 24 hours/.test(alert.text), 'the name is cut');
    assert.ok(!LINKABLE.test(alert.text), alert.text);
    assert.ok(!LINKABLE.test(alert.html), alert.html);
    assert.ok(!/SECURITY TEAM[^<]*<br|<p>\s*SECURITY TEAM/.test(alert.html), 'no paragraph of its own in the HTML');
    assert.match(characters(alert.html), /“laptop&#39;\. SECURITY TEAM/);
  });
});
