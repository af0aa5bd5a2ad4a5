// New-device alerts: a sign-in (site, panel, API token issue) from a device the account has not
// used before mails the account (time, IP, device, a link to the security page); the first
// device of an account is recorded silently; a browser is known by its device cookie, not its
// IP; NEW_DEVICE_ALERTS=false sends none; a failing mail server fails no sign-in.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { DEVICE_COOKIE } from '../../src/http/shared/new-device.js';
import { createUser, type TestApp } from '../helpers.js';
import { characters, setCookie, WebClient } from '../support/client.js';
import { startMailServer, type MailServer } from './mail-server.js';
import { appWithMail, closeAppWithMail, isLoggedIn, login } from './support.js';

const FIREFOX = 'Mozilla/5.0 (X11; Ubuntu; Linux x86_64; rv:133.0) Gecko/20100101 Firefox/133.0';
const SAFARI = 'Mozilla/5.0 (iPhone; CPU iPhone OS 18_1 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/18.1 Mobile/15E148 Safari/604.1';
const SUBJECT = 'New sign-in to your account';
const PASSWORD = 'device-password-1';

describe('new-device alerts', () => {
  let mail: MailServer;
  let t: TestApp;
  let counter = 0;

  before(async () => {
    ({ t, mail } = await appWithMail());
  });
  after(() => closeAppWithMail(t, mail));

  const account = async (fields: { admin?: boolean; locale?: string } = {}) => {
    counter += 1;
    const user = await createUser(t.app, { email: `device-${counter}@example.com`, password: PASSWORD, admin: fields.admin ?? false });
    if (fields.locale !== undefined) await t.db.kysely.updateTable('users').set({ locale: fields.locale }).where('id', '=', user.id).execute();
    return user;
  };
  const browser = (ua = FIREFOX, ip = '203.0.113.7') => new WebClient(t.app, { headers: { 'user-agent': ua }, remoteAddress: ip });
  const alertsTo = async (address: string) => {
    await t.app.services.mail.settled();
    return mail.to(address).filter((message) => message.subject === SUBJECT || message.subject === 'Nouvelle connexion à votre compte');
  };
  // A person's sign-ins are seconds apart: each one's notice (recorded after the answer, in the
  // background) is done before the next. Two at once may both find the account without a device
  // and both count as its first, which sends nothing; a loaded PostgreSQL run once did that here.
  const signIn = async (client: WebClient, email: string) => {
    await login(client, email, PASSWORD);
    await t.app.services.mail.settled();
  };
  const devicesOf = async (userId: number) => t.db.kysely.selectFrom('known_devices').selectAll().where('user_id', '=', userId).execute();

  it('records the first sign-in of an account without an alert, and sets a long-lived HttpOnly device cookie', async () => {
    const user = await account();
    const client = browser();
    await client.get('/login');
    const response = await client.post('/login', { email: user.email, password: PASSWORD });
    const cookie = setCookie(response, DEVICE_COOKIE);
    assert.ok(cookie, 'the device cookie is set');
    assert.equal(cookie.httpOnly, true);
    assert.equal(cookie.maxAge, 400 * 24 * 3600);
    assert.equal(cookie.sameSite, 'Lax');
    assert.deepEqual(await alertsTo(user.email), []);
    const devices = await devicesOf(user.id);
    assert.equal(devices.length, 1);
    assert.match(devices[0]!.fingerprint, /^[0-9a-f]{64}$/);
    assert.ok(!devices[0]!.fingerprint.includes(client.cookies.get(DEVICE_COOKIE)!), 'only a hash of the cookie is stored');
  });

  it('records the registering browser: a sign-in from another one right after is a new device, one from it is not', async () => {
    const client = browser();
    await client.get('/register');
    const email = `registered-${Date.now()}@example.com`;
    const registered = await client.post('/register', { name: 'New Person', email, password: PASSWORD, password_confirmation: PASSWORD });
    assert.equal(registered.statusCode, 303);
    assert.ok(setCookie(registered, DEVICE_COOKIE), 'the registering browser gets its device cookie');
    await t.app.services.mail.settled();
    const user = await t.app.services.users.findByEmail(email);
    assert.equal((await devicesOf(user!.id)).length, 1);
    await signIn(browser(SAFARI), email);
    assert.equal((await alertsTo(email)).length, 1, 'another browser is new');
    await client.get('/dashboard');
    await client.post('/logout');
    await signIn(client, email);
    assert.equal((await alertsTo(email)).length, 1, 'the registering browser is known');
  });

  it('sends nothing for the same device cookie, even from another IP address', async () => {
    const user = await account();
    const client = browser(FIREFOX, '203.0.113.7');
    await signIn(client, user.email);
    await client.post('/logout');
    const moved = new WebClient(t.app, { headers: { 'user-agent': FIREFOX }, remoteAddress: '192.0.2.99' });
    moved.cookies.set(DEVICE_COOKIE, client.cookies.get(DEVICE_COOKIE)!);
    await signIn(moved, user.email);
    assert.deepEqual(await alertsTo(user.email), []);
    assert.equal((await devicesOf(user.id)).length, 1);
  });

  it('mails the account for a new device: time, IP, device, a link to the security page, what to do if it was not them', async () => {
    const user = await account();
    await signIn(browser(), user.email);
    await signIn(browser(SAFARI, '198.51.100.23'), user.email);
    const [alert, ...more] = await alertsTo(user.email);
    assert.ok(alert);
    assert.deepEqual(more, []);
    assert.match(alert.text, /signed in to from a device it had not been used on before/);
    assert.match(alert.text, /IP address: 198\.51\.100\.23/);
    assert.match(alert.text, /Device: Mobile Safari 18 \/ iOS 18\.1/);
    assert.match(alert.text, new RegExp(`Time: .*${new Date().getUTCFullYear()}.*UTC`));
    assert.match(alert.text, /http:\/\/localhost:3000\/security/);
    assert.match(alert.text, /If this was not you, change your password/);
    assert.equal((await devicesOf(user.id)).length, 2);
  });

  it('writes the alert in the user\'s language, with the time as they write it', async () => {
    const user = await account({ locale: 'fr' });
    await signIn(browser(), user.email);
    await signIn(browser(), user.email);
    const [alert] = await alertsTo(user.email);
    assert.equal(alert?.subject, 'Nouvelle connexion à votre compte');
    assert.match(alert.text, /Adresse IP : 203\.0\.113\.7/);
    assert.match(alert.text, /Date : .*(lundi|mardi|mercredi|jeudi|vendredi|samedi|dimanche)/);
  });

  it('alerts for a panel sign-in from a new device, but not for the panel on a browser already known', async () => {
    const admin = await account({ admin: true });
    const known = browser();
    await signIn(known, admin.email);
    await known.adminLogin(admin.email, PASSWORD);
    assert.deepEqual(await alertsTo(admin.email), []);
    await browser(SAFARI).adminLogin(admin.email, PASSWORD);
    const [alert] = await alertsTo(admin.email);
    assert.match(alert?.text ?? '', /administration panel from a device/);
  });

  it('alerts for POST /api/tokens from a new client (user agent + device name), not for the same one again', async () => {
    const user = await account();
    await signIn(browser(), user.email);
    const issue = (ua: string, device: string) =>
      t.app.inject({ method: 'POST', url: '/api/tokens', headers: { 'user-agent': ua, accept: 'application/json' }, remoteAddress: '192.0.2.44', payload: { email: user.email, password: PASSWORD, device_name: device } });
    assert.equal((await issue('curl/8.5.0', 'build-server')).statusCode, 200);
    assert.equal((await issue('curl/8.5.0', 'build-server')).statusCode, 200);
    const alerts = await alertsTo(user.email);
    assert.equal(alerts.length, 1);
    assert.match(alerts[0]!.text, /An API token was issued/);
    assert.match(characters(alerts[0]!.text), /Device: “build-server”/);
    assert.match(alerts[0]!.text, /IP address: 192\.0\.2\.44/);
    assert.equal((await issue('curl/8.5.0', 'laptop')).statusCode, 200);
    assert.equal((await alertsTo(user.email)).length, 2, 'another device name is another device');
  });

  it('sends no alert with NEW_DEVICE_ALERTS=false (devices are still recorded)', async () => {
    const quiet = await appWithMail({ NEW_DEVICE_ALERTS: 'false' });
    try {
      const user = await createUser(quiet.t.app, { email: 'quiet@example.com', password: PASSWORD });
      await login(new WebClient(quiet.t.app), user.email, PASSWORD);
      await login(new WebClient(quiet.t.app, { headers: { 'user-agent': SAFARI } }), user.email, PASSWORD);
      await quiet.t.app.inject({ method: 'POST', url: '/api/tokens', payload: { email: user.email, password: PASSWORD, device_name: 'cli' } });
      await quiet.t.app.services.mail.settled();
      assert.deepEqual(quiet.mail.to(user.email), []);
      assert.equal((await quiet.t.db.kysely.selectFrom('known_devices').select('id').where('user_id', '=', user.id).execute()).length, 3);
    } finally {
      await closeAppWithMail(quiet.t, quiet.mail);
    }
  });

  it('signs in all the same when the mail server refuses the alert', async () => {
    const refusing = await startMailServer({
      onRcptTo(_address, _session, callback) {
        callback(new Error('mailbox unavailable'));
      },
    });
    const { buildTestApp } = await import('../helpers.js');
    const app = await buildTestApp(refusing.env);
    try {
      const user = await createUser(app.app, { email: 'refused@example.com', password: PASSWORD });
      await login(new WebClient(app.app), user.email, PASSWORD);
      const client = new WebClient(app.app, { headers: { 'user-agent': SAFARI } });
      await login(client, user.email, PASSWORD);
      assert.equal(await isLoggedIn(client), true);
      const token = await app.app.inject({ method: 'POST', url: '/api/tokens', payload: { email: user.email, password: PASSWORD, device_name: 'cli' } });
      assert.equal(token.statusCode, 200);
      await app.app.services.mail.settled();
      assert.equal((await app.db.kysely.selectFrom('known_devices').select('id').where('user_id', '=', user.id).execute()).length, 3);
    } finally {
      await closeAppWithMail(app, refusing);
    }
  });
});
