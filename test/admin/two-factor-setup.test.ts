// The panel's two-factor set-up (/admin/two-factor), where ADMIN_REQUIRE_2FA=true sends an
// administrator without it: begin, the QR code and the key, a code computed here from the shown
// key plus the password on the same form, 8 recovery codes shown once with a one-time download,
// then the panel opens.
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

  /** Begin, then the page with the QR code; returns the key it shows. */
  const begin = async (client: WebClient): Promise<string> => {
    await client.get(PAGE);
    const begun = await client.post(PAGE);
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
    assert.doesNotMatch(page.body, /<svg xmlns/);
  });

  it('shows the QR code and the key once begun, and keeps two-factor off until confirmed', async () => {
    const { client, admin } = await signedIn();
    const secret = await begin(client);
    const page = client.last!;
    assert.match(page.body, /role="img" aria-label="QR code to scan with an authenticator app"><svg xmlns="http:\/\/www\.w3\.org\/2000\/svg"/);
    assert.match(page.body, /name="code"[^>]*autocomplete="one-time-code"/);
    assert.match(page.body, /name="password" type="password" autocomplete="current-password"/);
    assert.equal((await t.app.services.twoFactor.pendingSetup(await reload(admin.id)))?.secret, secret);
    assert.equal(twoFactorEnabled(await reload(admin.id)), false);
    assert.equal((await client.get('/admin')).headers.location, PAGE, 'the panel stays closed');
  });

  it('refuses a wrong password or a wrong code inline with 422 and changes nothing', async () => {
    const { client, admin } = await signedIn();
    const secret = await begin(client);
    const before = await reload(admin.id);
    const code = await generate({ secret });
    const wrongCode = String((Number(code) + 1) % 1_000_000).padStart(6, '0');

    const badPassword = await client.post(`${PAGE}/confirm`, { code, password: 'not the password' });
    assert.equal(badPassword.statusCode, 422);
    assert.ok(fieldError(badPassword.body, 'password') !== null, 'password error');
    assert.equal(shownSecret(badPassword.body), secret, 'the same set-up again');

    const badCode = await client.post(`${PAGE}/confirm`, { code: wrongCode, password: admin.plainPassword });
    assert.equal(badCode.statusCode, 422);
    assert.equal(fieldError(badCode.body, 'code'), 'This code is not valid. Enter the current 6-digit code from your authenticator app.');
    assert.match(badCode.body, /id="field-code"[^>]* aria-invalid="true"/);

    const empty = await client.post(`${PAGE}/confirm`, { code: '', password: '' });
    assert.equal(empty.statusCode, 422);
    assert.deepEqual(await reload(admin.id), before);
  });

  it('turns it on with a code and the password, shows 8 recovery codes once, then opens the panel', async () => {
    const { client, admin } = await signedIn();
    const secret = await begin(client);
    const confirmed = await client.post(`${PAGE}/confirm`, { code: await generate({ secret }), password: admin.plainPassword });
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
    assert.equal((await client.post(PAGE)).statusCode, 303);
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
