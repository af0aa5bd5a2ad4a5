// The sign-in pipeline (modules/sign-in): the rules after any method hold once, for every way in.
// A table over the methods and realms (password on the site, the panel and the API; the same
// with the two-factor code; a passkey on the site and the panel): each leaves one audit line of
// its realm naming its method, records the device and alerts the account when the device is
// new. A password, whatever its realm, is followed by the code when two-factor is on; a passkey
// never is. The panel refuses an account that is not an administrator, whatever the method.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { LightMyRequestResponse } from 'fastify';
import type { OutgoingMail } from '../../src/modules/mail/mailer.js';
import type { SignInMethod } from '../../src/modules/sign-in/sign-in.service.js';
import { ValidationError } from '../../src/modules/shared/errors.js';
import { buildTestApp, createUser, type TestApp } from '../helpers.js';
import { WebClient } from '../support/client.js';
import { codeAt, enableTwoFactor } from '../support/two-factor-sign-in.js';
import { SoftPasskey } from './soft-passkey.js';
import { login } from './support.js';

const PASSWORD = 'pipeline-password-1';
const ALERT = 'New sign-in to your account';

type Account = Awaited<ReturnType<typeof createUser>> & { secret?: string; passkey?: SoftPasskey };

describe('the sign-in pipeline, after every method', () => {
  let t: TestApp;
  const sent: OutgoingMail[] = [];
  let address = 0;
  /** Each sign-in from an address of its own: the throttles count per IP. */
  const browser = () => new WebClient(t.app, { remoteAddress: `10.7.0.${(address += 1)}` });

  before(async () => {
    t = await buildTestApp({ LOG_LEVEL: 'error' }, { mailer: { send: async (mail) => void sent.push(mail), close: () => undefined } });
  });
  after(() => t.close());

  /** An account that has signed in before from another device, so a new one is alerted. */
  async function account(fields: { admin?: boolean; twoFactor?: boolean; passkey?: boolean } = {}): Promise<Account> {
    const user: Account = await createUser(t.app, { password: PASSWORD, admin: fields.admin ?? false });
    if (fields.passkey === true) {
      const owner = browser();
      await login(owner, user.email, PASSWORD);
      const confirmed = await owner.submit('/user/confirm-password', '/user/confirm-password', { password: PASSWORD });
      assert.equal(confirmed.statusCode, 303);
      user.passkey = new SoftPasskey();
      const options = await owner.postJson('/user/passkeys/options', { name: 'Laptop' });
      assert.equal((await owner.postJson('/user/passkeys', { response: user.passkey.create(options.json().options) })).statusCode, 201);
    }
    if (fields.twoFactor === true) user.secret = (await enableTwoFactor(t.app, user.id)).secret;
    // Whatever the set-up left, the account now knows one other device and no line yet.
    await t.app.services.mail.settled();
    await t.db.kysely.deleteFrom('known_devices').where('user_id', '=', user.id).execute();
    await t.db.kysely.deleteFrom('audit_logs').where('user_id', '=', user.id).execute();
    await t.db.kysely.insertInto('known_devices').values({ user_id: user.id, fingerprint: 'f'.repeat(64), created_at: new Date().toISOString(), last_seen_at: new Date().toISOString() }).execute();
    return user;
  }

  async function passwordStep(client: WebClient, path: string, user: Account): Promise<LightMyRequestResponse> {
    await client.get(path);
    return client.post(path, { email: user.email, password: PASSWORD });
  }

  async function codeStep(client: WebClient, path: string, user: Account): Promise<LightMyRequestResponse> {
    await client.get(path);
    return client.post(path, { code: await codeAt(user.secret!) });
  }

  async function passkeyStep(client: WebClient, realm: 'site' | 'panel', user: Account): Promise<LightMyRequestResponse> {
    const prefix = realm === 'panel' ? '/admin' : '';
    await client.get(`${prefix}/login`);
    const options = (await client.postJson(`${prefix}/passkeys/login/options`, {})).json().options;
    return client.postJson(`${prefix}/passkeys/login`, { response: user.passkey!.get(options) });
  }

  const tokenRequest = (user: Account, extra: Record<string, string> = {}) =>
    t.app.inject({ method: 'POST', url: '/api/tokens', payload: { email: user.email, password: PASSWORD, device_name: 'pipeline-cli', ...extra }, remoteAddress: `10.7.1.${(address += 1)}` });

  type Case = {
    name: string;
    fields: { admin?: boolean; twoFactor?: boolean; passkey?: boolean };
    action: string;
    method: string;
    signIn(user: Account): Promise<void>;
  };

  const cases: Case[] = [
    {
      name: 'password on the site',
      fields: {},
      action: 'auth.login',
      method: 'password',
      signIn: async (user) => assert.equal((await passwordStep(browser(), '/login', user)).headers.location, '/dashboard'),
    },
    {
      name: 'password + code on the site',
      fields: { twoFactor: true },
      action: 'auth.login',
      method: 'password+two-factor',
      signIn: async (user) => {
        const client = browser();
        assert.equal((await passwordStep(client, '/login', user)).headers.location, '/two-factor-challenge');
        assert.equal((await codeStep(client, '/two-factor-challenge', user)).headers.location, '/dashboard');
      },
    },
    {
      name: 'passkey on the site',
      fields: { passkey: true },
      action: 'auth.login',
      method: 'passkey',
      signIn: async (user) => assert.equal((await passkeyStep(browser(), 'site', user)).json().redirect, '/dashboard'),
    },
    {
      name: 'password on the panel',
      fields: { admin: true },
      action: 'admin.login',
      method: 'password',
      signIn: async (user) => assert.equal((await passwordStep(browser(), '/admin/login', user)).headers.location, '/admin'),
    },
    {
      name: 'password + code on the panel',
      fields: { admin: true, twoFactor: true },
      action: 'admin.login',
      method: 'password+two-factor',
      signIn: async (user) => {
        const client = browser();
        assert.equal((await passwordStep(client, '/admin/login', user)).headers.location, '/admin/two-factor-challenge');
        assert.equal((await codeStep(client, '/admin/two-factor-challenge', user)).headers.location, '/admin');
      },
    },
    {
      name: 'passkey on the panel',
      fields: { admin: true, passkey: true },
      action: 'admin.login',
      method: 'passkey',
      signIn: async (user) => assert.equal((await passkeyStep(browser(), 'panel', user)).json().redirect, '/admin'),
    },
    {
      name: 'password through POST /api/tokens',
      fields: {},
      action: 'auth.token_issued',
      method: 'password',
      signIn: async (user) => assert.equal((await tokenRequest(user)).statusCode, 200),
    },
    {
      name: 'password + code through POST /api/tokens',
      fields: { twoFactor: true },
      action: 'auth.token_issued',
      method: 'password+two-factor',
      signIn: async (user) => assert.equal((await tokenRequest(user, { code: await codeAt(user.secret!) })).statusCode, 200),
    },
  ];

  for (const { name, fields, action, method, signIn } of cases) {
    it(`${name}: one ${action} line naming "${method}", the device recorded, the account alerted`, async () => {
      const user = await account(fields);
      sent.length = 0;
      await signIn(user);
      await t.app.services.mail.settled();
      const lines = await t.db.kysely.selectFrom('audit_logs').selectAll().where('user_id', '=', user.id).execute();
      assert.deepEqual(
        lines.map((line) => [line.action, JSON.parse(line.details).method]),
        [[action, method]],
      );
      assert.equal(lines[0]!.ip?.startsWith('10.7.'), true);
      const devices = await t.db.kysely.selectFrom('known_devices').select('fingerprint').where('user_id', '=', user.id).execute();
      assert.equal(devices.length, 2, 'the new device is recorded beside the old one');
      assert.deepEqual(
        sent.filter((mail) => mail.to === user.email).map((mail) => mail.subject),
        [ALERT],
      );
    });
  }

  describe('the attempts of every realm, counted by the pipeline', () => {
    // One /64 is one client, as for the API's request limits: rotating addresses inside one's own
    // network buys no guesses. (Before the pipeline, the site counted each IPv6 address apart.)
    const sameNetwork = (i: number) => `2001:db8:7:0:${i}::1`;
    type Attempt = (app: TestApp, user: Account, password: string, ip: string) => Promise<LightMyRequestResponse>;
    const cases: { name: string; env: Record<string, string>; attempt: Attempt }[] = [
      { name: 'the site’s form', env: {}, attempt: (app, user, password, ip) => {
        const client = new WebClient(app.app, { remoteAddress: ip });
        return client.get('/login').then(() => client.post('/login', { email: user.email, password }));
      } },
      { name: 'POST /api/tokens (LOGIN_RATE_LIMIT=5)', env: { LOGIN_RATE_LIMIT: '5' }, attempt: (app, user, password, ip) =>
        app.app.inject({ method: 'POST', url: '/api/tokens', payload: { email: user.email, password, device_name: 'd' }, remoteAddress: ip }) },
    ];
    for (const { name, env, attempt } of cases) {
      it(`${name}: five wrong passwords from five addresses of one /64, then 429 even for the right one; another /64 is apart`, async () => {
        const own = await buildTestApp(env);
        try {
          const user: Account = await createUser(own.app, { password: PASSWORD });
          for (let i = 1; i <= 5; i += 1) assert.notEqual((await attempt(own, user, 'wrong password 1', sameNetwork(i))).statusCode, 429);
          const limited = await attempt(own, user, PASSWORD, sameNetwork(6));
          assert.equal(limited.statusCode, 429, limited.body);
          assert.ok(Number(limited.headers['retry-after']) > 0);
          const elsewhere = await attempt(own, user, PASSWORD, '2001:db8:8::1');
          assert.notEqual(elsewhere.statusCode, 429);
        } finally {
          await own.close();
        }
      });
    }
  });

  describe('the second factor after a password, whatever the realm', () => {
    it('asks for the code on the site (a page, or {"two_factor": true} for an SPA), on the panel and from the API, and signs nobody in before it', async () => {
      const user = await account({ admin: true, twoFactor: true });
      const site = browser();
      assert.equal((await passwordStep(site, '/login', user)).headers.location, '/two-factor-challenge');
      assert.equal((await site.get('/dashboard')).statusCode, 302);
      const spa = browser();
      await spa.get('/login');
      const json = await spa.postJson('/login', { email: user.email, password: PASSWORD });
      assert.deepEqual([json.statusCode, json.json()], [200, { two_factor: true }]);
      const panel = browser();
      assert.equal((await passwordStep(panel, '/admin/login', user)).headers.location, '/admin/two-factor-challenge');
      assert.equal((await panel.get('/admin')).statusCode, 302);
      const api = await tokenRequest(user);
      assert.equal(api.statusCode, 422);
      assert.ok(api.json().errors.code);
      await t.app.services.mail.settled();
      assert.deepEqual(await t.db.kysely.selectFrom('audit_logs').select('action').where('user_id', '=', user.id).execute(), [], 'no sign-in yet');
    });

    it('asks no code after a passkey (two factors already)', async () => {
      const user = await account({ twoFactor: true, passkey: true });
      const response = await passkeyStep(browser(), 'site', user);
      assert.equal(response.json().redirect, '/dashboard');
    });
  });

  describe('the panel is for administrators, whatever the method', () => {
    it('refuses a non-administrator’s password, passkey and code like a wrong one, and writes no line', async () => {
      const user = await account({ passkey: true });
      const password = await passwordStep(browser(), '/admin/login', user);
      assert.equal(password.statusCode, 422);
      const passkey = await passkeyStep(browser(), 'panel', user);
      assert.equal(passkey.statusCode, 422);
      assert.equal(passkey.json().message, 'This passkey could not be verified.');

      // An administrator demoted between the password and the code: the code step starts over.
      const admin = await account({ admin: true, twoFactor: true });
      const client = browser();
      assert.equal((await passwordStep(client, '/admin/login', admin)).headers.location, '/admin/two-factor-challenge');
      await t.db.kysely.updateTable('users').set({ is_admin: 0 }).where('id', '=', admin.id).execute();
      assert.equal((await codeStep(client, '/admin/two-factor-challenge', admin)).headers.location, '/admin/login');
      assert.equal((await client.get('/admin')).statusCode, 302);
      for (const id of [user.id, admin.id]) {
        assert.deepEqual(await t.db.kysely.selectFrom('audit_logs').select('action').where('user_id', '=', id).execute(), []);
      }
    });

    it('refuses, in the domain, a method in a realm it does not open, before anything is counted or checked', async () => {
      let checked = false;
      const siteOnly: SignInMethod<null> = {
        name: 'site-only',
        realms: ['site'],
        strong: false,
        throttle: () => {
          checked = true;
          return null;
        },
        verify: async () => {
          checked = true;
          return null;
        },
        refused: () => new ValidationError({ email: ['refused'] }),
      };
      await assert.rejects(t.app.services.signIn.attempt(siteOnly, null, { realm: 'panel', ip: '10.7.9.9', client: '10.7.9.9', locale: 'en' }), ValidationError);
      assert.equal(checked, false);
    });
  });
});
