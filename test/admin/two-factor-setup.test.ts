// The panel's two-factor set-up (/admin/two-factor), where ADMIN_REQUIRE_2FA=true sends an
// administrator without it: begin with the password (the panel's password confirmation), the QR
// code and the key shown only to a panel session that confirmed it recently, a code computed here
// from the shown key, 8 recovery codes shown once with a one-time download, then the panel opens.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { generate } from 'otplib';
import type { User } from '../../src/db/types.js';
import { twoFactorEnabled } from '../../src/modules/two-factor/two-factor.service.js';
import { buildTestApp, type TestApp } from '../helpers.js';
import { WebClient } from '../support/client.js';
import { codeAt, enableTwoFactor } from '../support/two-factor-sign-in.js';
import { createAdminByCli, fieldError, type Admin } from './support.js';

const PAGE = '/admin/two-factor';

function shownSecret(html: string): string | null {
  const match = /data-secret>([A-Z2-7 ]+)</.exec(html);
  return match?.[1] === undefined ? null : match[1].replace(/ /g, '');
}

function shownCodes(html: string): string[] {
  const list = /<ul class="recovery-codes"[^>]*>([\s\S]*?)<\/ul>/.exec(html)?.[1] ?? '';
  return [...list.matchAll(/<code>([^<]+)<\/code>/g)].map((match) => match[1]!);
}

describe('the panel two-factor set-up page (ADMIN_REQUIRE_2FA=true)', () => {
  let t: TestApp;

  before(async () => {
    t = await buildTestApp({ ADMIN_REQUIRE_2FA: 'true' });
  });
  after(() => t.close());

  const reload = async (id: number): Promise<User> => (await t.app.services.users.findById(id))!;

  /** An administrator signed in with the password, on the set-up page. */
  const signedIn = async (setup?: (admin: Admin) => Promise<unknown>) => {
    const admin = await createAdminByCli(t);
    await setup?.(admin);
    const client = new WebClient(t.app);
    const login = await client.submit('/admin/login', '/admin/login', { email: admin.email, password: admin.plainPassword });
    assert.equal(login.statusCode, 303, login.body);
    return { admin, client };
  };

  /** Begin with the password, then the page with the QR code; returns the key it shows. */
  const begin = async (client: WebClient, password = 'panel keeper 2026'): Promise<string> => {
    await client.get(PAGE);
    const begun = await client.post(PAGE, { password });
    assert.equal(begun.statusCode, 303);
    assert.equal(begun.headers.location, PAGE);
    const page = await client.get(PAGE);
    const secret = shownSecret(page.body);
    assert.ok(secret !== null, 'the key is shown');
    return secret;
  };

  it('sends an administrator without two-factor to the set-up page, in the panel layout', async () => {
    const { client } = await signedIn();
    const blocked = await client.get('/admin/users');
    assert.equal(blocked.statusCode, 302);
    assert.equal(blocked.headers.location, PAGE);
    const page = await client.get(PAGE);
    assert.equal(page.statusCode, 200);
    assert.match(page.body, /class="admin-shell"/);
    assert.match(page.body, /<h1 id="page-title">Set up two-factor sign-in<\/h1>/);
    assert.match(page.body, /The panel requires two-factor sign-in for administrators/);
    assert.match(page.body, />Begin set-up</);
    assert.match(page.body, /name="password" type="password" autocomplete="current-password"/, 'beginning asks for the password');
    assert.doesNotMatch(page.body, /<svg xmlns/);
  });

  it('shows the QR code and the key once begun, and keeps two-factor off until confirmed', async () => {
    const { client, admin } = await signedIn();
    const secret = await begin(client);
    const page = client.last!;
    assert.match(page.body, /role="img" aria-label="QR code to scan with an authenticator app"><svg xmlns="http:\/\/www\.w3\.org\/2000\/svg"/);
    assert.match(page.body, /name="code"[^>]*autocomplete="one-time-code"/);
    assert.doesNotMatch(page.body, /name="password"/, 'the password was given to begin: the code form does not ask again');
    assert.equal((await t.app.services.twoFactor.pendingSetup(await reload(admin.id)))?.secret, secret);
    assert.equal(twoFactorEnabled(await reload(admin.id)), false);
    assert.equal((await client.get('/admin')).headers.location, PAGE, 'the panel stays closed');
  });

  it('begins only with the password: a wrong or missing one is an inline 422 and begins nothing', async () => {
    const { client, admin } = await signedIn();
    await client.get(PAGE);
    for (const password of ['not the password', '']) {
      const refused = await client.post(PAGE, { password });
      assert.equal(refused.statusCode, 422, password);
      assert.ok(fieldError(refused.body, 'password') !== null, 'password error');
      assert.equal(shownSecret(refused.body), null);
    }
    assert.equal((await reload(admin.id)).two_factor_secret, null, 'nothing begun');
  });

  it('shows the key of a set-up under way only to a panel session that confirmed the password', async () => {
    const { client, admin } = await signedIn();
    const secret = await begin(client);
    // Another panel session of the same administrator: told a set-up is under way, no key.
    const other = new WebClient(t.app);
    assert.equal((await other.submit('/admin/login', '/admin/login', { email: admin.email, password: admin.plainPassword })).statusCode, 303);
    const hidden = await other.get(PAGE);
    assert.equal(hidden.statusCode, 200);
    assert.equal(shownSecret(hidden.body), null);
    assert.ok(!hidden.body.includes(secret) && !hidden.body.includes(secret.match(/.{1,4}/g)!.join(' ')), 'the key is nowhere in the page');
    assert.doesNotMatch(hidden.body, /<svg xmlns/);
    assert.match(hidden.body, /A set-up of two-factor sign-in is under way/);
    assert.match(hidden.body, />Continue set-up</);
    // Its code form is refused too: the set-up goes on only after the password.
    const code = await generate({ secret });
    const early = await other.post(`${PAGE}/confirm`, { code });
    assert.equal(early.statusCode, 303);
    assert.equal(early.headers.location, PAGE);
    const script = await other.postJson(`${PAGE}/confirm`, { code });
    assert.equal(script.statusCode, 423);
    assert.ok(!script.body.includes(secret));
    assert.equal(twoFactorEnabled(await reload(admin.id)), false);
    // With the password, the same set-up continues (the key the owner may have scanned).
    assert.equal(await begin(other, admin.plainPassword), secret);
  });

  it("does not take the site's password confirmation for the panel's", async () => {
    const { client, admin } = await signedIn();
    await t.app.services.twoFactor.begin(admin);
    // The same browser signs in to the site and confirms the password there.
    await client.submit('/login', '/login', { email: admin.email, password: admin.plainPassword });
    await client.submit('/user/confirm-password', '/user/confirm-password', { password: admin.plainPassword });
    assert.equal(shownSecret((await client.get(PAGE)).body), null);
  });

  it('refuses a wrong code inline with 422 and changes nothing', async () => {
    const { client, admin } = await signedIn();
    const secret = await begin(client);
    const before = await reload(admin.id);
    const code = await generate({ secret });
    const wrongCode = String((Number(code) + 1) % 1_000_000).padStart(6, '0');

    const badCode = await client.post(`${PAGE}/confirm`, { code: wrongCode });
    assert.equal(badCode.statusCode, 422);
    assert.equal(fieldError(badCode.body, 'code'), 'This code is not valid. Enter the current 6-digit code from your authenticator app.');
    assert.match(badCode.body, /id="field-code"[^>]* aria-invalid="true"/);

    const empty = await client.post(`${PAGE}/confirm`, { code: '' });
    assert.equal(empty.statusCode, 422);
    assert.deepEqual(await reload(admin.id), before);
  });

  it('turns it on with a code, shows 8 recovery codes once, then opens the panel', async () => {
    const { client, admin } = await signedIn();
    const secret = await begin(client);
    const confirmed = await client.post(`${PAGE}/confirm`, { code: await generate({ secret }) });
    assert.equal(confirmed.statusCode, 303, confirmed.body);
    assert.equal(confirmed.headers.location, PAGE);
    assert.equal(twoFactorEnabled(await reload(admin.id)), true);

    const page = await client.get(PAGE);
    const codes = shownCodes(page.body);
    assert.equal(codes.length, 8);
    assert.match(page.body, /<a class="button" href="\/admin">Continue to the panel<\/a>/);
    assert.match(page.body, /href="\/admin\/two-factor\/recovery-codes\.txt" download/);
    assert.equal(await t.app.services.twoFactor.verifySignIn(await reload(admin.id), { recoveryCode: codes[7]! }), true);

    const file = await client.get(`${PAGE}/recovery-codes.txt`);
    assert.equal(file.statusCode, 200);
    assert.match(String(file.headers['content-disposition']), /^attachment; filename=".+-recovery-codes\.txt"$/);
    assert.equal(file.headers['cache-control'], 'no-store');
    for (const code of codes) assert.ok(file.body.includes(code));
    assert.equal((await client.get(`${PAGE}/recovery-codes.txt`)).statusCode, 303, 'once');
    assert.deepEqual(shownCodes((await client.get(PAGE)).body), [], 'shown once');

    const panel = await client.get('/admin');
    assert.equal(panel.statusCode, 200, 'the panel is open now');
  });

  it('shows an administrator who has it on that it is on, and does not begin again over the working secret', async () => {
    let secret = '';
    const { client, admin } = await signedIn(async (a) => (secret = (await enableTwoFactor(t.app, a.id)).secret));
    // The code step of the sign-in (the challenge), with the current code.
    await client.get('/admin/two-factor-challenge');
    const signedInWithCode = await client.post('/admin/two-factor-challenge', { code: await codeAt(secret) });
    assert.equal(signedInWithCode.statusCode, 303, signedInWithCode.body);
    const page = await client.get(PAGE);
    assert.equal(page.statusCode, 200);
    assert.match(page.body, /Two-factor sign-in is on for your account\./);
    assert.doesNotMatch(page.body, /Begin set-up|The panel requires/);
    const before = await reload(admin.id);
    assert.equal((await client.post(PAGE, { password: admin.plainPassword })).statusCode, 303);
    assert.deepEqual(await reload(admin.id), before);
  });

  it('speaks French', async () => {
    const { client } = await signedIn();
    client.cookies.set('locale', 'fr');
    const page = await client.get(PAGE);
    assert.match(page.body, /Configurer la connexion à deux facteurs/);
    assert.match(page.body, />Commencer la configuration</);
  });
});
