// The security page's browser sessions (Jetstream's "Browser Sessions"): the list of a user's
// active site sessions with device, address and last activity, ending one or all the others
// behind a fresh password confirmation, and the remember-me tokens of ended devices forgotten.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { REMEMBER_COOKIE } from '../../src/http/web/remember.js';
import { sessionHandle } from '../../src/modules/sessions/browser-sessions.service.js';
import { SESSION_COOKIE } from '../../src/plugins/session.js';
import { buildTestApp, createUser, type TestApp } from '../helpers.js';
import { WebClient } from '../support/client.js';
import { isLoggedIn, login, mainOf, sessionIdOf, sessionRow } from './support.js';

const MAC_CHROME = 'Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_7) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36';
const LINUX_FIREFOX = 'Mozilla/5.0 (X11; Linux x86_64; rv:133.0) Gecko/20100101 Firefox/133.0';
const PASSWORD = 'sessions-password-1';

/** The rows of the sessions table on the security page: [device, ip, last active, action]. */
function sessionRows(html: string): string[][] {
  const body = /<section class="card browser-sessions"[\s\S]*?<tbody>([\s\S]*?)<\/tbody>/.exec(html)?.[1] ?? '';
  return [...body.matchAll(/<tr[^>]*>([\s\S]*?)<\/tr>/g)].map((row) =>
    [...row[1]!.matchAll(/<td[^>]*>([\s\S]*?)<\/td>/g)].map((cell) => cell[1]!.replace(/<[^>]+>/g, ' ').replace(/\s+/g, ' ').trim()),
  );
}

describe('browser sessions', () => {
  let t: TestApp;

  before(async () => {
    t = await buildTestApp();
  });
  after(() => t.close());

  /** Two browsers of one user: a Mac with Chrome and a Linux box with Firefox, from different addresses. */
  const twoBrowsers = async (options: { remember?: boolean } = {}) => {
    const user = await createUser(t.app, { password: PASSWORD });
    const mac = new WebClient(t.app, { headers: { 'user-agent': MAC_CHROME }, remoteAddress: '203.0.113.7' });
    const linux = new WebClient(t.app, { headers: { 'user-agent': LINUX_FIREFOX }, remoteAddress: '198.51.100.23' });
    const extra: Record<string, string> = options.remember ? { remember: '1' } : {};
    await login(mac, user.email, PASSWORD, extra);
    await login(linux, user.email, PASSWORD, extra);
    return { user, mac, linux };
  };

  const confirm = async (client: WebClient) => {
    await client.get('/user/confirm-password');
    const response = await client.post('/user/confirm-password', { password: PASSWORD });
    assert.equal(response.statusCode, 303);
  };

  it('lists both sessions with device, IP and "This device" for the current one', async () => {
    const { mac, linux } = await twoBrowsers();
    const page = await mac.get('/security');
    assert.equal(page.statusCode, 200);
    const rows = sessionRows(page.body);
    assert.equal(rows.length, 2);
    assert.deepEqual(rows[0]!.slice(0, 2), ['Chrome on macOS', '203.0.113.7']);
    assert.match(rows[0]![3]!, /This device/);
    assert.deepEqual(rows[1]!.slice(0, 2), ['Firefox on Linux', '198.51.100.23']);
    assert.doesNotMatch(rows[1]![3]!, /This device/);
    assert.match(rows[1]![3]!, /End/);
    assert.match(mainOf(page.body), /Log out other browser sessions/);
    assert.match(mainOf(page.body), /href="\/user\/api-tokens"/);
    // The other browser sees itself as the current one.
    const other = sessionRows((await linux.get('/security')).body);
    assert.deepEqual(other[0]!.slice(0, 2), ['Firefox on Linux', '198.51.100.23']);
    assert.match(other[0]![3]!, /This device/);
  });

  it('stores the address and user agent in the session row and shows "Active now" from its last save', async () => {
    const { mac, linux } = await twoBrowsers();
    const row = await sessionRow(t.db, sessionIdOf(mac));
    assert.equal(row?.ip, '203.0.113.7');
    assert.equal(row?.user_agent, MAC_CHROME);
    assert.match(sessionRows((await mac.get('/security')).body)[0]![2]!, /Active now/);
    // An hour without a request: the last activity is the row's last save.
    await t.db.kysely.updateTable('sessions').set({ updated_at: new Date(Date.now() - 3_600_000).toISOString() }).where('id', '=', sessionIdOf(mac)!).execute();
    const seen = sessionRows((await linux.get('/security')).body)[1]!;
    assert.equal(seen[0], 'Chrome on macOS');
    assert.match(seen[2]!, /1 hour ago/);
  });

  it('updates the address when the session is used from another one', async () => {
    const { mac } = await twoBrowsers();
    const moved = new WebClient(t.app, { headers: { 'user-agent': MAC_CHROME }, remoteAddress: '192.0.2.99' });
    moved.cookies.set(SESSION_COOKIE, mac.cookies.get(SESSION_COOKIE)!);
    assert.equal((await moved.get('/dashboard')).statusCode, 200);
    assert.equal((await sessionRow(t.db, sessionIdOf(mac)))?.ip, '192.0.2.99');
  });

  it('names an unknown user agent "Unknown device"', async () => {
    const user = await createUser(t.app, { password: PASSWORD });
    const bot = new WebClient(t.app, { headers: { 'user-agent': '' } });
    await login(bot, user.email, PASSWORD);
    assert.equal(sessionRows((await bot.get('/security')).body)[0]![0], 'Unknown device');
  });

  it('asks for the password before ending another session, then ends it and forgets its remember-me token', async () => {
    const { user, mac, linux } = await twoBrowsers({ remember: true });
    const linuxRemember = linux.cookies.get(REMEMBER_COOKIE)!;
    const handle = sessionHandle(sessionIdOf(linux)!);
    await mac.get('/security');
    const asked = await mac.post('/user/sessions/end', { session: handle });
    assert.equal(asked.statusCode, 303);
    assert.equal(asked.headers.location, '/user/confirm-password');
    assert.ok(await isLoggedIn(linux), 'nothing ended before the confirmation');

    await confirm(mac);
    await mac.get('/security');
    const ended = await mac.post('/user/sessions/end', { session: handle });
    assert.equal(ended.statusCode, 303);
    assert.equal(ended.headers.location, '/security');
    assert.match(mainOf((await mac.follow(ended)).body), /That browser session has been ended/);
    assert.equal(await sessionRow(t.db, sessionIdOf(linux)), undefined);

    // The ended browser is logged out, and its remember-me cookie no longer logs it back in.
    assert.equal(linux.cookies.get(REMEMBER_COOKIE), linuxRemember);
    assert.equal(await isLoggedIn(linux), false);
    const selector = linuxRemember.split('.')[0]!;
    const tokens = await t.db.kysely.selectFrom('remember_tokens').select('selector').where('user_id', '=', user.id).execute();
    assert.deepEqual(
      tokens.map((row) => row.selector),
      [mac.cookies.get(REMEMBER_COOKIE)!.split('.')[0]],
      'only the ended device was forgotten',
    );
    assert.ok(!tokens.some((row) => row.selector === selector));
    assert.ok(await isLoggedIn(mac), 'this device stays');
    assert.equal(sessionRows((await mac.get('/security')).body).length, 1);
  });

  it('forgets the remember-me token of a device that logged back in by it', async () => {
    const { user, mac, linux } = await twoBrowsers({ remember: true });
    // The Linux browser was closed: its next visit logs in by the remember cookie, in a new session.
    linux.cookies.delete(SESSION_COOKIE);
    assert.ok(await isLoggedIn(linux));
    await confirm(mac);
    await mac.get('/security');
    await mac.post('/user/sessions/end', { session: sessionHandle(sessionIdOf(linux)!) });
    assert.equal(await isLoggedIn(linux), false);
    const left = await t.db.kysely.selectFrom('remember_tokens').select('id').where('user_id', '=', user.id).execute();
    assert.equal(left.length, 1);
  });

  it('"Log out other browser sessions" ends every other session and remember-me token, and keeps this one', async () => {
    const { user, mac, linux } = await twoBrowsers({ remember: true });
    const third = new WebClient(t.app, { headers: { 'user-agent': LINUX_FIREFOX } });
    await login(third, user.email, PASSWORD, { remember: '1' });
    // A remembered device whose session is already gone is forgotten too.
    third.cookies.delete(SESSION_COOKIE);
    await t.db.kysely.deleteFrom('sessions').where('id', '=', sessionIdOf(linux)!).execute();
    linux.cookies.delete(SESSION_COOKIE);
    await mac.get('/security');
    const asked = await mac.post('/user/sessions/others');
    assert.equal(asked.headers.location, '/user/confirm-password');

    await confirm(mac);
    await mac.get('/security');
    // When this session began: kept only if its row is never deleted (a row deleted and saved
    // again by the same request would begin now).
    const began = new Date(Date.now() - 600_000).toISOString();
    await t.db.kysely.updateTable('sessions').set({ created_at: began }).where('id', '=', sessionIdOf(mac)!).execute();
    const done = await mac.post('/user/sessions/others');
    assert.equal(done.headers.location, '/security');
    assert.match(mainOf((await mac.follow(done)).body), /Your other browser sessions have been logged out/);
    assert.equal(await isLoggedIn(linux), false);
    assert.equal(await isLoggedIn(third), false);
    assert.ok(await isLoggedIn(mac));
    const sessions = await t.db.kysely.selectFrom('sessions').select('id').where('user_id', '=', user.id).execute();
    assert.deepEqual(sessions.map((row) => row.id), [sessionIdOf(mac)]);
    assert.equal((await sessionRow(t.db, sessionIdOf(mac)))?.created_at, began, 'this session was never ended');
    const tokens = await t.db.kysely.selectFrom('remember_tokens').select('selector').where('user_id', '=', user.id).execute();
    assert.deepEqual(tokens.map((row) => row.selector), [mac.cookies.get(REMEMBER_COOKIE)!.split('.')[0]]);
    // This device is still remembered.
    mac.cookies.delete(SESSION_COOKIE);
    assert.ok(await isLoggedIn(mac));
  });

  it('cannot end a session of another user', async () => {
    const victim = await twoBrowsers();
    const { mac: attacker } = await twoBrowsers();
    await confirm(attacker);
    await attacker.get('/security');
    const response = await attacker.post('/user/sessions/end', { session: sessionHandle(sessionIdOf(victim.linux)!) });
    assert.equal(response.statusCode, 303);
    assert.match(mainOf((await attacker.follow(response)).body), /That session no longer exists/);
    assert.ok(await isLoggedIn(victim.linux));
    assert.ok(await isLoggedIn(victim.mac));
    // Nor by its raw id.
    await attacker.get('/security');
    await attacker.post('/user/sessions/end', { session: sessionIdOf(victim.linux)! });
    assert.ok(await isLoggedIn(victim.linux));
  });

  it('does not list expired sessions or other users\' sessions', async () => {
    const { mac, linux } = await twoBrowsers();
    await twoBrowsers();
    await t.db.kysely.updateTable('sessions').set({ expires_at: new Date(Date.now() - 1000).toISOString() }).where('id', '=', sessionIdOf(linux)!).execute();
    const rows = sessionRows((await mac.get('/security')).body);
    assert.equal(rows.length, 1);
    assert.doesNotMatch(mainOf((await mac.get('/security')).body), /Log out other browser sessions/);
  });

  it('refuses a forged form without the CSRF token', async () => {
    const { mac, linux } = await twoBrowsers();
    await confirm(mac);
    const response = await mac.post('/user/sessions/others', {}, { token: false });
    assert.equal(response.statusCode, 419);
    assert.ok(await isLoggedIn(linux));
  });

  it('sends guests to the login page and unverified users to verify their email', async () => {
    const guest = new WebClient(t.app);
    assert.equal((await guest.get('/security')).headers.location, '/login');
    await guest.get('/login');
    assert.equal((await guest.post('/user/sessions/others')).headers.location, '/login');
    assert.equal((await guest.post('/user/sessions/end', { session: 'x' })).headers.location, '/login');

    const strict = await buildTestApp({ MUST_VERIFY_EMAIL: 'true' });
    try {
      const user = await createUser(strict.app, { password: PASSWORD, verified: false });
      const client = new WebClient(strict.app);
      await login(client, user.email, PASSWORD);
      assert.equal((await client.get('/security')).headers.location, '/email/verify');
      await client.get('/dashboard');
      assert.equal((await client.post('/user/sessions/others')).headers.location, '/email/verify');
    } finally {
      await strict.close();
    }
  });

  it('speaks French', async () => {
    const { mac } = await twoBrowsers();
    const page = await mac.get('/security', { 'accept-language': 'fr' });
    assert.match(mainOf(page.body), /Sessions de navigateur/);
    assert.match(sessionRows(page.body)[0]!.join(' '), /Chrome sous macOS .* Cet appareil/);
    assert.match(mainOf(page.body), /Déconnecter les autres sessions de navigateur/);
  });
});
