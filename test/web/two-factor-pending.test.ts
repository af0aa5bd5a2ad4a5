// The key of a two-factor set-up under way is shown only to a session whose password was
// confirmed recently, as Fortify keeps it behind password.confirm: a second session of the same
// account (a borrowed or stolen one, whose password was never confirmed) sees that a set-up is
// under way and a link to confirm, never the key or its QR code. Whoever holds the key can make
// the codes that will guard the account.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { buildTestApp, createUser, type TestApp } from '../helpers.js';
import { WebClient } from '../support/client.js';
import { login, mainOf } from './support.js';

const PASSWORD = 'pending-set-up-1';

describe('a two-factor set-up under way', () => {
  let t: TestApp;
  before(async () => {
    t = await buildTestApp({ PASSWORD_TIMEOUT: '900' });
  });
  after(() => t.close());

  const confirmPassword = async (client: WebClient) => {
    await client.get('/user/confirm-password');
    const response = await client.post('/user/confirm-password', { password: PASSWORD });
    assert.equal(response.statusCode, 303, response.body);
    return response;
  };

  /** The owner starts a set-up (password confirmed); returns the secret, ungrouped. */
  const started = async () => {
    const user = await createUser(t.app, { password: PASSWORD });
    const owner = new WebClient(t.app);
    await login(owner, user.email, PASSWORD);
    await confirmPassword(owner);
    await owner.get('/security');
    assert.equal((await owner.post('/user/two-factor')).statusCode, 303);
    const setup = await t.app.services.twoFactor.pendingSetup((await t.app.services.users.findById(user.id))!);
    assert.ok(setup !== null);
    return { user, owner, secret: setup.secret };
  };

  /** Every form a script or a reader could find the key in. */
  const assertNoSecret = (body: string, secret: string) => {
    const grouped = secret.match(/.{1,4}/g)!.join(' ');
    assert.ok(!body.includes(secret), 'the key is not in the answer');
    assert.ok(!body.includes(grouped), 'the grouped key is not in the answer');
    assert.ok(!body.includes(encodeURIComponent(secret)), 'no otpauth URL');
    assert.doesNotMatch(body, /data-secret|<svg xmlns/, 'no key, no QR code');
  };

  it("shows the owner's confirmed session the key and the QR code", async () => {
    const { owner, secret } = await started();
    const page = await owner.get('/security');
    assert.equal(page.statusCode, 200);
    assert.match(page.body, /data-secret>/);
    assert.ok(page.body.includes(secret.match(/.{1,4}/g)!.join(' ')));
  });

  it('hides the key and the QR code from another session of the account that has not confirmed the password', async () => {
    const { user, secret } = await started();
    const other = new WebClient(t.app);
    await login(other, user.email, PASSWORD);
    const page = await other.get('/security');
    assert.equal(page.statusCode, 200);
    assertNoSecret(page.body, secret);
    const main = mainOf(page.body);
    assert.match(main, /A set-up of two-factor sign-in is under way/);
    assert.match(main, /<a [^>]*href="\/user\/confirm-password"[^>]*>Confirm your password to continue the set-up<\/a>/);
    // No code form either: the set-up goes on only after the confirmation.
    assert.doesNotMatch(main, /action="\/user\/two-factor\/confirm"/);
    const json = await other.get('/security', { accept: 'application/json' });
    assertNoSecret(json.body, secret);
    for (const action of ['/user/two-factor', '/user/two-factor/confirm']) {
      const script = await other.postJson(action, { code: '123456' });
      assert.equal(script.statusCode, 423, action);
      assertNoSecret(script.body, secret);
    }

    // Once that session confirms the password, it continues the same set-up.
    const back = await confirmPassword(other);
    assert.equal(back.headers.location, '/security');
    const confirmed = await other.get('/security');
    assert.ok(confirmed.body.includes(secret.match(/.{1,4}/g)!.join(' ')), 'the same key, now shown');
  });

  it('hides the key again once the confirmation has expired', async () => {
    const { owner, secret } = await started();
    const sessions = await t.db.kysely.selectFrom('sessions').select(['id', 'payload']).execute();
    // The owner's confirmation, moved back past PASSWORD_TIMEOUT (900 s) in its stored session.
    for (const row of sessions) {
      const payload = JSON.parse(String(row.payload)) as { passwordConfirmedAt?: number };
      if (typeof payload.passwordConfirmedAt !== 'number') continue;
      payload.passwordConfirmedAt -= 901 * 1000;
      await t.db.kysely.updateTable('sessions').set({ payload: JSON.stringify(payload) }).where('id', '=', row.id).execute();
    }
    const page = await owner.get('/security');
    assertNoSecret(page.body, secret);
    assert.match(mainOf(page.body), /Confirm your password to continue the set-up/);
  });
});
