// Turning two-factor sign-in on and off from the security page, over HTTP as a browser without
// JavaScript does it: each action behind a fresh password confirmation; Enable shows the QR code
// and the key; a code computed here from the shown key confirms it; 8 recovery codes shown once
// with a one-time download; a wrong code is an inline 422; new codes; Disable; the French page.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { generate } from 'otplib';
import type { User } from '../../src/db/types.js';
import { twoFactorEnabled } from '../../src/modules/two-factor/two-factor.service.js';
import { buildTestApp, createUser, type TestApp } from '../helpers.js';
import { characters, fieldError, WebClient } from '../support/client.js';
import { login, mainOf, sessionIdOf, sessionRow } from './support.js';

const PASSWORD = 'two-factor-setup-1';
const ACTIONS = ['/user/two-factor', '/user/two-factor/confirm', '/user/two-factor/recovery-codes', '/user/two-factor/disable'];

/** The setup key shown on the page, without the reading spaces. */
function shownSecret(html: string): string | null {
  const match = /data-secret>([A-Z2-7 ]+)</.exec(html);
  return match?.[1] === undefined ? null : match[1].replace(/ /g, '');
}

/** The recovery codes listed on the page. */
function shownCodes(html: string): string[] {
  const list = /<ul class="recovery-codes"[^>]*>([\s\S]*?)<\/ul>/.exec(html)?.[1] ?? '';
  return [...list.matchAll(/<code>([^<]+)<\/code>/g)].map((match) => match[1]!);
}

describe('two-factor set-up on the security page', () => {
  let t: TestApp;

  before(async () => {
    t = await buildTestApp();
  });
  after(() => t.close());

  const reload = async (id: number): Promise<User> => (await t.app.services.users.findById(id))!;

  /** A signed-in client of a new user; with `confirmed`, the password was just confirmed. */
  const signedIn = async (confirmed = true) => {
    const user = await createUser(t.app, { password: PASSWORD });
    const client = new WebClient(t.app);
    await login(client, user.email, PASSWORD);
    if (confirmed) {
      await client.get('/user/confirm-password');
      const response = await client.post('/user/confirm-password', { password: PASSWORD });
      assert.equal(response.statusCode, 303, response.body);
    }
    await client.get('/security');
    return { client, user };
  };

  /** Enable, then the code computed from the key the page shows: two-factor on. */
  const enable = async (client: WebClient) => {
    assert.equal((await client.post('/user/two-factor')).statusCode, 303);
    const page = await client.get('/security');
    const secret = shownSecret(page.body);
    assert.ok(secret !== null, 'the key is shown');
    const confirmed = await client.post('/user/two-factor/confirm', { code: await generate({ secret }) });
    assert.equal(confirmed.statusCode, 303, confirmed.body);
    return secret;
  };

  it('asks for the password before each action, and changes nothing meanwhile', async () => {
    const { client, user } = await signedIn(false);
    for (const action of ACTIONS) {
      const response = await client.post(action, { code: '123456' });
      assert.equal(response.statusCode, 303, action);
      assert.equal(response.headers.location, '/user/confirm-password', action);
    }
    assert.equal((await reload(user.id)).two_factor_secret, null);
    // A script gets 423 instead of the detour.
    const json = await client.postJson('/user/two-factor', {});
    assert.equal(json.statusCode, 423);
  });

  it('shows an Enable button while it is off, and "Off" as a badge as "On" is', async () => {
    const { client } = await signedIn();
    const main = mainOf((await client.get('/security')).body);
    assert.match(main, /<form method="post" action="\/user\/two-factor" class="form-actions end">/);
    assert.match(main, />Enable</);
    assert.match(main, /<strong class="badge state-off">Off<\/strong>/);
    assert.doesNotMatch(main, /<svg/);
  });

  it('Enable shows the QR code (an image with a name) and the key as text, and two-factor is still off', async () => {
    const { client, user } = await signedIn();
    const response = await client.post('/user/two-factor');
    assert.equal(response.statusCode, 303);
    assert.equal(response.headers.location, '/security#two-factor');
    const page = await client.get('/security');
    assert.match(page.body, /<div class="two-factor-qr" role="img" aria-label="QR code to scan with an authenticator app"><svg xmlns="http:\/\/www\.w3\.org\/2000\/svg"/);
    assert.match(page.body, /Setup key/);
    assert.match(page.body, /data-secret>([A-Z2-7]{4} )+[A-Z2-7]{1,4}</, 'grouped by four');
    const secret = shownSecret(page.body);
    const stored = await reload(user.id);
    assert.equal((await t.app.services.twoFactor.pendingSetup(stored))?.secret, secret);
    assert.equal(twoFactorEnabled(stored), false);
    assert.match(page.body, /name="code"[^>]*autocomplete="one-time-code"/);
  });

  it('refuses a wrong code with an inline 422 on the field and changes nothing', async () => {
    const { client, user } = await signedIn();
    await client.post('/user/two-factor');
    const page = await client.get('/security');
    const secret = shownSecret(page.body)!;
    const before = await reload(user.id);
    const right = await generate({ secret });
    const wrong = String((Number(right) + 1) % 1_000_000).padStart(6, '0');
    for (const code of [wrong, '', 'abcdef']) {
      const response = await client.post('/user/two-factor/confirm', { code });
      assert.equal(response.statusCode, 422, code);
      assert.equal(fieldError(response.body, 'code'), 'This code is not valid. Enter the current 6-digit code from your authenticator app.', code);
      assert.match(response.body, /id="field-code"[^>]*aria-describedby="field-code-hint field-code-error"[^>]* aria-invalid="true"/);
      assert.equal(shownSecret(response.body), secret, 'the same set-up is shown again');
    }
    assert.deepEqual(await reload(user.id), before);
  });

  it('confirm turns it on and shows 8 recovery codes once, which are never stored in plaintext', async () => {
    const { client, user } = await signedIn();
    await enable(client);
    assert.equal(twoFactorEnabled(await reload(user.id)), true);
    const page = await client.get('/security');
    assert.match(page.body, /Two-factor sign-in is on\./, 'the flash');
    const codes = shownCodes(page.body);
    assert.equal(codes.length, 8);
    assert.match(page.body, /They are shown only now/);
    // Neither the users table nor the session row holds them in plaintext.
    const stored = await reload(user.id);
    const session = await sessionRow(t.db, sessionIdOf(client));
    for (const code of codes) {
      assert.ok(!String(stored.two_factor_recovery_codes).includes(code));
      assert.ok(!JSON.stringify(session).includes(code));
    }
    const again = await client.get('/security');
    assert.deepEqual(shownCodes(again.body), [], 'shown once');
    assert.match(again.body, /Recovery codes left: 8 of 8\./);
    assert.match(again.body, />Regenerate recovery codes</);
    assert.match(again.body, />Disable</);
    // They are the account's codes.
    assert.equal(await t.app.services.twoFactor.verifySignIn(await reload(user.id), { recoveryCode: codes[0]! }), true);
  });

  it('offers the codes as a text file once, right after they were made', async () => {
    const { client, user } = await signedIn();
    await enable(client);
    const page = await client.get('/security');
    const codes = shownCodes(page.body);
    assert.match(page.body, /href="\/user\/two-factor\/recovery-codes\.txt" download/);
    assert.match(page.body, /The download works once, and only now/);
    const file = await client.get('/user/two-factor/recovery-codes.txt');
    assert.equal(file.statusCode, 200);
    assert.match(String(file.headers['content-type']), /^text\/plain; charset=utf-8/);
    assert.match(String(file.headers['content-disposition']), /^attachment; filename="[a-z0-9._-]+-recovery-codes\.txt"$/);
    assert.equal(file.headers['cache-control'], 'no-store');
    assert.match(file.body, new RegExp(`Account: ${user.email.replace(/[.]/g, '\\.')}`));
    for (const code of codes) assert.ok(file.body.includes(`\r\n${code}\r\n`), code);

    const second = await client.get('/user/two-factor/recovery-codes.txt');
    assert.equal(second.statusCode, 303);
    assert.equal(second.headers.location, '/security#two-factor');
    assert.match((await client.get('/security')).body, /can no longer be downloaded/);
  });

  it('does not offer the download once the page after the codes was left', async () => {
    const { client } = await signedIn();
    await enable(client);
    await client.get('/security');
    await client.get('/security');
    assert.equal((await client.get('/user/two-factor/recovery-codes.txt')).statusCode, 303);
  });

  it('does not hand one user the codes of another in the same browser', async () => {
    const { client } = await signedIn();
    await enable(client);
    const other = await createUser(t.app, { password: PASSWORD });
    await client.post('/logout');
    await login(client, other.email, PASSWORD);
    assert.equal((await client.get('/user/two-factor/recovery-codes.txt')).statusCode, 303);
    assert.deepEqual(shownCodes((await client.get('/security')).body), []);
  });

  it('regenerating shows 8 new codes once and retires the old ones', async () => {
    const { client, user } = await signedIn();
    await enable(client);
    const old = shownCodes((await client.get('/security')).body);
    const response = await client.post('/user/two-factor/recovery-codes');
    assert.equal(response.statusCode, 303);
    const page = await client.get('/security');
    assert.match(page.body, /New recovery codes were made/);
    const fresh = shownCodes(page.body);
    assert.equal(fresh.length, 8);
    assert.equal(fresh.filter((code) => old.includes(code)).length, 0);
    assert.equal(await t.app.services.twoFactor.verifySignIn(await reload(user.id), { recoveryCode: old[0]! }), false);
    assert.equal(await t.app.services.twoFactor.verifySignIn(await reload(user.id), { recoveryCode: fresh[0]! }), true);
  });

  it('Enable while it is on keeps the working secret', async () => {
    const { client, user } = await signedIn();
    await enable(client);
    const before = await reload(user.id);
    assert.equal((await client.post('/user/two-factor')).statusCode, 303);
    assert.deepEqual(await reload(user.id), before);
  });

  it('Disable turns it off and deletes the secret and the codes', async () => {
    const { client, user } = await signedIn();
    await enable(client);
    await client.get('/security');
    const response = await client.post('/user/two-factor/disable');
    assert.equal(response.statusCode, 303);
    const stored = await reload(user.id);
    assert.deepEqual([stored.two_factor_secret, stored.two_factor_recovery_codes, stored.two_factor_confirmed_at], [null, null, null]);
    const page = await client.get('/security');
    assert.match(page.body, /Two-factor sign-in is off\./);
    assert.match(mainOf(page.body), />Enable</);
  });

  it('Cancel drops a set-up under way', async () => {
    const { client, user } = await signedIn();
    await client.post('/user/two-factor');
    assert.match((await client.get('/security')).body, />Cancel</);
    await client.post('/user/two-factor/disable');
    assert.equal((await reload(user.id)).two_factor_secret, null);
  });

  it('answers a script with the set-up and the recovery codes as JSON', async () => {
    const { client, user } = await signedIn();
    const begun = await client.postJson('/user/two-factor', {});
    assert.equal(begun.statusCode, 200);
    const { secret, otpauth_url: uri, svg } = begun.json() as { secret: string; otpauth_url: string; svg: string };
    assert.match(uri, /^otpauth:\/\/totp\//);
    assert.match(svg, /^<svg/);
    const confirmed = await client.postJson('/user/two-factor/confirm', { code: await generate({ secret }) });
    assert.equal(confirmed.statusCode, 200, confirmed.body);
    assert.equal(confirmed.headers['cache-control'], 'no-store');
    assert.equal((confirmed.json() as { recovery_codes: string[] }).recovery_codes.length, 8);
    assert.equal(twoFactorEnabled(await reload(user.id)), true);
    const wrong = await client.postJson('/user/two-factor/recovery-codes', {});
    assert.equal(wrong.statusCode, 200);
  });

  it('speaks French', async () => {
    const { client } = await signedIn();
    client.cookies.set('locale', 'fr');
    let page = await client.get('/security');
    assert.match(page.body, /Connexion à deux facteurs/);
    assert.match(page.body, />Activer</);
    await client.post('/user/two-factor');
    page = await client.get('/security');
    assert.match(characters(page.body), /aria-label="QR code à scanner avec une application d’authentification"/);
    assert.match(page.body, /Clé de configuration/);
    const response = await client.post('/user/two-factor/confirm', { code: '000000x' });
    assert.equal(response.statusCode, 422);
    assert.match(characters(fieldError(response.body, 'code') ?? ''), /^Ce code n’est pas valide/);
    const secret = shownSecret(response.body)!;
    await client.post('/user/two-factor/confirm', { code: await generate({ secret }) });
    page = await client.get('/security');
    assert.match(page.body, /Vos codes de secours/);
    assert.match(page.body, /Télécharger les codes/);
    const file = await client.get('/user/two-factor/recovery-codes.txt');
    assert.match(file.body, /codes de secours de la connexion à deux facteurs/);
  });
});
