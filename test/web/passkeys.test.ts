// Passkeys over HTTP: adding (behind the password confirmation), listing, removing, signing in
// on the site and the panel, and confirming the password with one. The authenticator is a small
// software one (soft-passkey.ts), so each answer the service checks is a real WebAuthn
// signature, and a forged one is really forged.
import assert from 'node:assert/strict';
import { generateKeyPairSync, randomBytes } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { buildTestApp, createUser, type TestApp } from '../helpers.js';
import { characters, WebClient } from '../support/client.js';
import { b64url, SoftPasskey } from './soft-passkey.js';
import { login, mainOf } from './support.js';

const PASSWORD = 'passkey-owner-password';

describe('passkeys', () => {
  let t: TestApp;

  before(async () => {
    t = await buildTestApp({ LOG_LEVEL: 'error' });
  });
  after(() => t.close());

  const signedIn = async (fields: { admin?: boolean } = {}) => {
    const user = await createUser(t.app, { password: PASSWORD, ...fields });
    const client = new WebClient(t.app);
    await login(client, user.email, PASSWORD);
    return { user, client };
  };

  const confirm = async (client: WebClient) => {
    const response = await client.submit('/user/confirm-password', '/user/confirm-password', { password: PASSWORD });
    // The session stays the same: the CSRF token scraped before still works.
    assert.equal(response.statusCode, 303);
  };

  const passkeysOf = (userId: number) => t.db.kysely.selectFrom('passkeys').selectAll().where('user_id', '=', userId).execute();

  /** Registers a software passkey for a confirmed, signed-in client. */
  const register = async (client: WebClient, name = 'Laptop', passkey = new SoftPasskey()) => {
    const options = await client.postJson('/user/passkeys/options', { name });
    assert.equal(options.statusCode, 200, options.body);
    const created = await client.postJson('/user/passkeys', { response: passkey.create(options.json().options) });
    assert.equal(created.statusCode, 201, created.body);
    return passkey;
  };

  it('asks for a fresh password confirmation before the registration options (423 for a script)', async () => {
    const { client } = await signedIn();
    await client.get('/security');
    const response = await client.postJson('/user/passkeys/options', { name: 'Laptop' });
    assert.equal(response.statusCode, 423);
    assert.equal((await client.postJson('/user/passkeys', { response: {} })).statusCode, 423);
  });

  it('gives registration options for this site: rpId from APP_URL, a discoverable key, existing passkeys excluded', async () => {
    const { user, client } = await signedIn();
    await confirm(client);
    const first = (await client.postJson('/user/passkeys/options', { name: 'Laptop' })).json().options;
    assert.equal(first.rp.id, 'localhost');
    assert.equal(first.rp.name, t.config.appName);
    assert.equal(first.authenticatorSelection.residentKey, 'required');
    assert.equal(first.authenticatorSelection.userVerification, 'preferred');
    assert.ok(typeof first.challenge === 'string' && first.challenge.length >= 16);
    assert.deepEqual(first.excludeCredentials, []);
    const passkey = await register(client);
    const second = (await client.postJson('/user/passkeys/options', { name: 'Phone' })).json().options;
    assert.deepEqual(second.excludeCredentials.map((c: { id: string }) => c.id), [b64url(passkey.id)]);
    assert.notEqual(second.challenge, first.challenge);
    assert.equal((await passkeysOf(user.id)).length, 1);
  });

  it('refuses a blank name with 422 before any ceremony', async () => {
    const { client } = await signedIn();
    await confirm(client);
    const response = await client.postJson('/user/passkeys/options', { name: '   ' });
    assert.equal(response.statusCode, 422);
    assert.ok(response.json().errors.name);
  });

  it('registers a passkey and lists it by name on the security page', async () => {
    const { user, client } = await signedIn();
    await confirm(client);
    await register(client, 'Work <laptop>');
    const rows = await passkeysOf(user.id);
    assert.equal(rows.length, 1);
    assert.equal(rows[0]!.name, 'Work <laptop>');
    assert.deepEqual(JSON.parse(rows[0]!.transports), ['internal']);
    const page = mainOf((await client.get('/security')).body);
    assert.match(page, /Work &lt;laptop&gt;/);
    assert.match(characters(page), /Passkey “Work &lt;laptop&gt;” added\./);
  });

  it('refuses a garbage or forged registration with 422 and stores nothing', async () => {
    const { user, client } = await signedIn();
    await confirm(client);
    const options = (await client.postJson('/user/passkeys/options', { name: 'Laptop' })).json().options;
    const garbage = await client.postJson('/user/passkeys', { response: { id: 'x', rawId: 'x', type: 'public-key', response: { clientDataJSON: 'bm9wZQ', attestationObject: 'bm9wZQ' } } });
    assert.equal(garbage.statusCode, 422);
    // A well-formed answer to another challenge (or from another origin) is a forgery all the same.
    const again = (await client.postJson('/user/passkeys/options', { name: 'Laptop' })).json().options;
    const wrongChallenge = await client.postJson('/user/passkeys', { response: new SoftPasskey().create({ ...again, challenge: options.challenge }) });
    assert.equal(wrongChallenge.statusCode, 422);
    const third = (await client.postJson('/user/passkeys/options', { name: 'Laptop' })).json().options;
    const otherOrigin = await client.postJson('/user/passkeys', { response: new SoftPasskey('http://evil.example').create(third) });
    assert.equal(otherOrigin.statusCode, 422);
    assert.equal((await passkeysOf(user.id)).length, 0);
  });

  it('uses a registration challenge once', async () => {
    const { user, client } = await signedIn();
    await confirm(client);
    const options = (await client.postJson('/user/passkeys/options', { name: 'Laptop' })).json().options;
    assert.equal((await client.postJson('/user/passkeys', { response: new SoftPasskey().create(options) })).statusCode, 201);
    const replay = await client.postJson('/user/passkeys', { response: new SoftPasskey().create(options) });
    assert.equal(replay.statusCode, 422);
    assert.equal((await passkeysOf(user.id)).length, 1);
  });

  it('removes one of the user’s passkeys after confirmation, and answers 404 for another user’s', async () => {
    const owner = await signedIn();
    await confirm(owner.client);
    await register(owner.client);
    const [row] = await passkeysOf(owner.user.id);

    const other = await signedIn();
    await confirm(other.client);
    const theirs = await other.client.post(`/user/passkeys/${row!.id}/delete`);
    assert.equal(theirs.statusCode, 404);
    assert.equal((await other.client.post('/user/passkeys/abc/delete')).statusCode, 404);
    assert.equal((await passkeysOf(owner.user.id)).length, 1);

    const removed = await owner.client.post(`/user/passkeys/${row!.id}/delete`);
    assert.equal(removed.statusCode, 303);
    assert.equal(removed.headers.location, '/security');
    assert.equal((await passkeysOf(owner.user.id)).length, 0);
  });

  it('sends a removal without a fresh confirmation to the confirmation page and removes nothing', async () => {
    const t2 = await buildTestApp({ PASSWORD_TIMEOUT: '1' });
    try {
      const user = await createUser(t2.app, { password: PASSWORD });
      const client = new WebClient(t2.app);
      await login(client, user.email, PASSWORD);
      await client.submit('/user/confirm-password', '/user/confirm-password', { password: PASSWORD });
      const options = (await client.postJson('/user/passkeys/options', { name: 'Laptop' })).json().options;
      assert.equal((await client.postJson('/user/passkeys', { response: new SoftPasskey().create(options) })).statusCode, 201);
      const [row] = await t2.db.kysely.selectFrom('passkeys').selectAll().where('user_id', '=', user.id).execute();
      await new Promise((resolve) => setTimeout(resolve, 1100));
      const response = await client.post(`/user/passkeys/${row!.id}/delete`, {}, { headers: { referer: 'http://localhost:3000/security' } });
      assert.equal(response.statusCode, 303);
      assert.equal(response.headers.location, '/user/confirm-password');
      assert.equal((await t2.db.kysely.selectFrom('passkeys').selectAll().where('user_id', '=', user.id).execute()).length, 1);
    } finally {
      await t2.close();
    }
  });

  describe('signing in', () => {
    const loginOptions = async (client: WebClient, path = '/passkeys/login/options') => {
      const response = await client.postJson(path, {});
      assert.equal(response.statusCode, 200, response.body);
      return response.json().options;
    };
    // Each test signs in from an address of its own: failures are throttled per IP.
    let address = 0;
    const newAddress = () => `10.1.0.${(address += 1)}`;
    const guest = async (page = '/login') => {
      const client = new WebClient(t.app, { remoteAddress: newAddress() });
      await client.get(page);
      return client;
    };

    it('gives options to a visitor with no account: no email asked, no credentials listed', async () => {
      const client = await guest();
      const options = await loginOptions(client);
      assert.equal(options.rpId, 'localhost');
      assert.equal(options.userVerification, 'required');
      assert.equal(options.allowCredentials, undefined);
    });

    it('signs in with a passkey, with no two-factor step, and records its use', async () => {
      const owner = await signedIn();
      await confirm(owner.client);
      const passkey = await register(owner.client);
      const client = await guest();
      const response = await client.postJson('/passkeys/login', { response: passkey.get(await loginOptions(client)) });
      assert.equal(response.statusCode, 200, response.body);
      assert.equal(response.json().redirect, '/dashboard');
      assert.equal((await client.get('/dashboard')).statusCode, 200);
      const [row] = await passkeysOf(owner.user.id);
      assert.equal(Number(row!.counter), 1);
      assert.notEqual(row!.last_used_at, null);
    });

    it('refuses a forged signature, an unknown passkey and a reused challenge with 422, and signs nobody in', async () => {
      const owner = await signedIn();
      await confirm(owner.client);
      const passkey = await register(owner.client);
      const client = await guest();
      const forger = generateKeyPairSync('ec', { namedCurve: 'P-256' }).privateKey;
      assert.equal((await client.postJson('/passkeys/login', { response: passkey.get(await loginOptions(client), forger) })).statusCode, 422);
      assert.equal((await client.postJson('/passkeys/login', { response: new SoftPasskey().get(await loginOptions(client)) })).statusCode, 422);
      assert.equal((await client.postJson('/passkeys/login', { response: { id: 'garbage' } })).statusCode, 422);
      // No user verification: one factor only, refused.
      assert.equal((await client.postJson('/passkeys/login', { response: passkey.get(await loginOptions(client), undefined, 0x01) })).statusCode, 422);

      const options = await loginOptions(client);
      const answer = passkey.get(options);
      const other = await guest();
      // The challenge lives in the session that asked for it: another session cannot use it.
      await loginOptions(other);
      assert.equal((await other.postJson('/passkeys/login', { response: answer })).statusCode, 422);
      assert.equal((await client.get('/dashboard')).statusCode, 302);
      const [row] = await passkeysOf(owner.user.id);
      assert.equal(row!.last_used_at, null);
    });

    it('uses a sign-in challenge once: a replayed answer is refused', async () => {
      const owner = await signedIn();
      await confirm(owner.client);
      const passkey = await register(owner.client);
      const client = await guest();
      const answer = passkey.get(await loginOptions(client));
      // Nothing asked for since: the challenge the answer signed is gone after the first try.
      const tampered = { ...answer, response: { ...(answer.response as object), signature: b64url(randomBytes(70)) } };
      assert.equal((await client.postJson('/passkeys/login', { response: tampered })).statusCode, 422);
      assert.equal((await client.postJson('/passkeys/login', { response: answer })).statusCode, 422);
    });

    it('throttles failed passkey sign-ins per IP: the sixth in a minute is 429', async () => {
      const t2 = await buildTestApp();
      try {
        const client = new WebClient(t2.app, { remoteAddress: '10.9.8.7' });
        await client.get('/login');
        for (let i = 0; i < 5; i += 1) {
          const options = (await client.postJson('/passkeys/login/options', {})).json().options;
          assert.equal((await client.postJson('/passkeys/login', { response: new SoftPasskey().get(options) })).statusCode, 422);
        }
        const options = (await client.postJson('/passkeys/login/options', {})).json().options;
        const limited = await client.postJson('/passkeys/login', { response: new SoftPasskey().get(options) });
        assert.equal(limited.statusCode, 429);
        assert.ok(Number(limited.headers['retry-after']) > 0);
        // Another address is not affected.
        const elsewhere = new WebClient(t2.app, { remoteAddress: '10.9.8.8' });
        await elsewhere.get('/login');
        const fresh = (await elsewhere.postJson('/passkeys/login/options', {})).json().options;
        assert.equal((await elsewhere.postJson('/passkeys/login', { response: new SoftPasskey().get(fresh) })).statusCode, 422);
      } finally {
        await t2.close();
      }
    });

    it('opens the panel to an administrator’s passkey, audited as admin.login', async () => {
      const admin = await signedIn({ admin: true });
      await confirm(admin.client);
      const passkey = await register(admin.client);
      const client = await guest('/admin/login');
      const response = await client.postJson('/admin/passkeys/login', { response: passkey.get(await loginOptions(client, '/admin/passkeys/login/options')) });
      assert.equal(response.statusCode, 200, response.body);
      assert.equal(response.json().redirect, '/admin');
      assert.equal((await client.get('/admin')).statusCode, 200);
      const audit = await t.db.kysely.selectFrom('audit_logs').selectAll().where('user_id', '=', admin.user.id).where('action', '=', 'admin.login').execute();
      assert.equal(audit.length, 1);
    });

    it('refuses a non-administrator’s passkey on the panel like a wrong password', async () => {
      const owner = await signedIn();
      await confirm(owner.client);
      const passkey = await register(owner.client);
      const client = await guest('/admin/login');
      const response = await client.postJson('/admin/passkeys/login', { response: passkey.get(await loginOptions(client, '/admin/passkeys/login/options')) });
      assert.equal(response.statusCode, 422);
      assert.equal(response.json().message, 'This passkey could not be verified.');
      assert.equal((await client.get('/admin')).statusCode, 302);
    });

    it('shows the passkey button on both login pages (hidden until the script runs)', async () => {
      const site = (await new WebClient(t.app).get('/login')).body;
      assert.match(site, /data-options="\/passkeys\/login\/options"/);
      assert.match(site, /<noscript>/);
      assert.match(site, /src="\/vendor\/simplewebauthn-browser\.js"/);
      const panel = (await new WebClient(t.app).get('/admin/login')).body;
      assert.match(panel, /data-options="\/admin\/passkeys\/login\/options"/);
    });
  });

  describe('confirming the password with a passkey', () => {
    it('offers a passkey on the confirmation page only to a user who has one', async () => {
      const { client } = await signedIn();
      assert.doesNotMatch((await client.get('/user/confirm-password')).body, /confirm-password\/passkey/);
      await confirm(client);
      await register(client);
      assert.match((await client.get('/user/confirm-password')).body, /data-verify="\/user\/confirm-password\/passkey"/);
    });

    it('confirms with the user’s own passkey, and refuses another user’s', async () => {
      const t2 = await buildTestApp({ PASSWORD_TIMEOUT: '1' });
      try {
        const make = async () => {
          const user = await createUser(t2.app, { password: PASSWORD });
          const client = new WebClient(t2.app);
          await login(client, user.email, PASSWORD);
          await client.submit('/user/confirm-password', '/user/confirm-password', { password: PASSWORD });
          const options = (await client.postJson('/user/passkeys/options', { name: 'Key' })).json().options;
          const passkey = new SoftPasskey();
          assert.equal((await client.postJson('/user/passkeys', { response: passkey.create(options) })).statusCode, 201);
          return { client, passkey };
        };
        const me = await make();
        const someone = await make();
        await new Promise((resolve) => setTimeout(resolve, 1100));
        await me.client.get('/user/confirm-password');
        assert.equal((await me.client.postJson('/user/passkeys/options', { name: 'Again' })).statusCode, 423);

        const theirs = (await me.client.postJson('/user/confirm-password/passkey/options', {})).json().options;
        assert.equal((await me.client.postJson('/user/confirm-password/passkey', { response: someone.passkey.get(theirs) })).statusCode, 422);
        assert.equal((await me.client.postJson('/user/passkeys/options', { name: 'Again' })).statusCode, 423);

        const mine = (await me.client.postJson('/user/confirm-password/passkey/options', {})).json().options;
        assert.equal(mine.allowCredentials.length, 1);
        const confirmed = await me.client.postJson('/user/confirm-password/passkey', { response: me.passkey.get(mine) });
        assert.equal(confirmed.statusCode, 200, confirmed.body);
        assert.equal(confirmed.json().redirect, '/security');
        assert.equal((await me.client.postJson('/user/passkeys/options', { name: 'Again' })).statusCode, 200);
      } finally {
        await t2.close();
      }
    });
  });

  it('serves the WebAuthn browser library from the service itself', async () => {
    const response = await new WebClient(t.app).get('/vendor/simplewebauthn-browser.js');
    assert.equal(response.statusCode, 200);
    assert.match(String(response.headers['content-type']), /javascript/);
    assert.match(response.body, /SimpleWebAuthnBrowser/);
  });
});
