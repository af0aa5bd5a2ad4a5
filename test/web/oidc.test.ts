// Sign-in with an OpenID Connect provider, against a real provider on loopback (panva's
// oidc-provider, test/support/oidc-provider.ts): the buttons, the first sign-in making an account,
// the next ones finding it, an email another account has never linked, two-factor after the
// provider, the panel never opened; and each failure — consent refused, a replayed or foreign
// state, a forged, expired or misdirected ID token, the provider away — landing on /login with
// one message, nothing created, nothing of a token in the log. On SQLite and PostgreSQL.
import assert from 'node:assert/strict';
import { after, before, beforeEach, describe, it } from 'node:test';
import type { LightMyRequestResponse } from 'fastify';
import { buildApp } from '../../src/app.js';
import { createTestDatabase, createUser, testConfig, type TestDatabase } from '../helpers.js';
import { statusMessage, WebClient } from '../support/client.js';
import { startTestProvider, type TestProvider } from '../support/oidc-provider.js';
import { codeAt, enableTwoFactor } from '../support/two-factor-sign-in.js';
import { freePort } from '../support/browser.js';
import type { FastifyInstance } from 'fastify';

const APP_URL = 'http://localhost:3000';

type Harness = { app: FastifyInstance; database: TestDatabase; logs: string[]; close(): Promise<void> };

async function appFor(env: Record<string, string>): Promise<Harness> {
  const database = await createTestDatabase();
  const logs: string[] = [];
  const app = await buildApp(testConfig({ LOG_LEVEL: 'info', ...env }), { db: database.db, loggerStream: { write: (line) => void logs.push(line) } });
  await app.ready();
  return {
    app,
    database,
    logs,
    close: async () => {
      await app.close();
      await database.drop();
    },
  };
}

describe('sign-in with an OpenID Connect provider', () => {
  let provider: TestProvider;
  let h: Harness;
  let app: FastifyInstance;
  let counter = 0;

  before(async () => {
    provider = await startTestProvider([`${APP_URL}/auth/corp/callback`, 'http://spa.localhost:5173/unused']);
    h = await appFor(provider.env('corp', { SANCTUM_STATEFUL_DOMAINS: 'spa.localhost:5173' }));
    app = h.app;
  });
  after(async () => {
    await h.close();
    await provider.close();
  });
  beforeEach(() => {
    provider.tamper = null;
  });

  /** A new account at the provider: its login name, with these claims. */
  const account = (claims: { email?: string; email_verified?: boolean; name?: string } = {}) => {
    counter += 1;
    const login = `person-${counter}-${Date.now()}`;
    provider.accounts.set(login, { email: `${login}@corp.example`, email_verified: true, name: `Person ${counter}`, ...claims });
    return login;
  };

  /** From a start (a GET, or a form's POST) through the provider's pages back to the app's callback. */
  const roundTrip = async (client: WebClient, started: LightMyRequestResponse, login: string | { abort: true }) => {
    assert.equal(started.statusCode, 303, started.body);
    const back = await provider.drive(String(started.headers.location), login);
    assert.equal(back.origin, APP_URL);
    assert.equal(back.pathname, '/auth/corp/callback');
    return { callback: `${back.pathname}${back.search}`, response: await client.get(`${back.pathname}${back.search}`) };
  };
  const signIn = async (client: WebClient, login: string | { abort: true }, start = '/auth/corp/redirect') => roundTrip(client, await client.get(start), login);

  const users = () => h.database.db.kysely.selectFrom('users').selectAll().execute();
  const identities = () => h.database.db.kysely.selectFrom('identities').selectAll().execute();
  const signedIn = async (client: WebClient) => (await client.get('/dashboard')).statusCode === 200;
  /** Lands on /login with the flash message, signed out. */
  const landsOnLogin = async (client: WebClient, response: LightMyRequestResponse, message: RegExp) => {
    assert.equal(response.statusCode, 303);
    assert.equal(response.headers.location, '/login');
    const page = await client.follow(response);
    assert.match(statusMessage(page.body) ?? '', message);
    assert.equal(await signedIn(client), false);
  };

  it('shows one "Continue with" button per provider on /login and /register, in English and French', async () => {
    const client = new WebClient(app);
    for (const path of ['/login', '/register']) {
      const page = await client.get(path);
      assert.match(page.body, /<a class="button secondary oidc-button" href="\/auth\/corp\/redirect">Continue with Corp ID<\/a>/);
    }
    const french = await client.get('/login', { 'accept-language': 'fr' });
    assert.match(french.body, /Continuer avec Corp ID/);
  });

  it('sends the browser to the provider with PKCE (S256), state, nonce and the registered redirect URI', async () => {
    const started = await new WebClient(app).get('/auth/corp/redirect');
    assert.equal(started.statusCode, 303);
    const url = new URL(String(started.headers.location));
    assert.equal(url.origin, provider.issuer);
    assert.equal(url.searchParams.get('redirect_uri'), `${APP_URL}/auth/corp/callback`);
    assert.equal(url.searchParams.get('code_challenge_method'), 'S256');
    assert.equal(url.searchParams.get('scope'), 'openid email profile');
    for (const name of ['code_challenge', 'state', 'nonce']) assert.ok((url.searchParams.get(name) ?? '').length >= 32, name);
    assert.equal(url.searchParams.get('client_id'), provider.clientId);
  });

  it('answers 404 for a provider that is not configured', async () => {
    assert.equal((await new WebClient(app).get('/auth/other/redirect')).statusCode, 404);
    assert.equal((await new WebClient(app).get('/auth/other/callback?code=x&state=y')).statusCode, 404);
  });

  it('makes an account at the first sign-in (verified email), signs it in, and finds it the next time', async () => {
    const login = account({ name: 'Ada Lovelace' });
    const client = new WebClient(app);
    const before = (await users()).length;
    const { response } = await signIn(client, login);
    assert.equal(response.statusCode, 303);
    assert.equal(response.headers.location, '/dashboard');
    assert.equal(await signedIn(client), true);
    const user = (await users()).find((row) => row.email === `${login}@corp.example`);
    assert.ok(user);
    assert.equal(user.name, 'Ada Lovelace');
    assert.equal(user.password, null);
    assert.notEqual(user.email_verified_at, null);
    assert.deepEqual(
      (await identities()).filter((row) => row.user_id === user.id).map((row) => [row.provider, row.subject]),
      [['corp', login]],
    );
    // The pipeline's audit line, naming the method.
    const audit = await h.database.db.kysely.selectFrom('audit_logs').select(['action', 'details']).where('user_id', '=', user.id).execute();
    assert.deepEqual(audit.map((row) => [row.action, JSON.parse(row.details).method]), [['auth.login', 'oidc']]);
    // Again, from another browser: the same account, no new one.
    const again = new WebClient(app);
    await signIn(again, login);
    assert.equal(await signedIn(again), true);
    assert.equal((await users()).length, before + 1);
  });

  it('counts the email as verified only when the provider says email_verified: true', async () => {
    const login = account({ email_verified: false });
    await signIn(new WebClient(app), login);
    const user = (await users()).find((row) => row.email === `${login}@corp.example`);
    assert.equal(user?.email_verified_at, null);
  });

  for (const verified of [true, false]) {
    it(`never links an unseen identity to the account that has its email (email_verified: ${verified}): /login asks to sign in and link from /security`, async () => {
      const existing = await createUser(app, { email: `owner-${verified}-${Date.now()}@corp.example` });
      const login = account({ email: existing.email.toUpperCase(), email_verified: verified });
      const client = new WebClient(app);
      const before = { users: (await users()).length, identities: (await identities()).length };
      const { response } = await signIn(client, login);
      await landsOnLogin(client, response, /already uses the email.*Log in to that account first, then connect Corp ID from the security page/);
      assert.deepEqual({ users: (await users()).length, identities: (await identities()).length }, before);
    });
  }

  it('asks a user with two-factor on for the code after the provider, and signs in only with it', async () => {
    const login = account();
    const first = new WebClient(app);
    await signIn(first, login);
    const user = (await users()).find((row) => row.email === `${login}@corp.example`)!;
    const { secret } = await enableTwoFactor(app, user.id);
    const client = new WebClient(app);
    const { response } = await signIn(client, login);
    assert.equal(response.statusCode, 303);
    assert.equal(response.headers.location, '/two-factor-challenge');
    assert.equal(await signedIn(client), false);
    await client.get('/two-factor-challenge');
    const code = await client.post('/two-factor-challenge', { code: await codeAt(secret) });
    assert.equal(code.statusCode, 303);
    assert.equal(await signedIn(client), true);
    const audit = await h.database.db.kysely.selectFrom('audit_logs').select('details').where('user_id', '=', user.id).where('action', '=', 'auth.login').orderBy('id', 'desc').executeTakeFirstOrThrow();
    assert.equal(JSON.parse(audit.details).method, 'oidc+two-factor');
  });

  it('never opens the panel, even for an administrator', async () => {
    const login = account();
    await signIn(new WebClient(app), login);
    await h.database.db.kysely.updateTable('users').set({ is_admin: 1 }).where('email', '=', `${login}@corp.example`).execute();
    const client = new WebClient(app);
    await signIn(client, login);
    assert.equal(await signedIn(client), true);
    const panel = await client.get('/admin');
    assert.equal(panel.statusCode, 302);
    assert.match(String(panel.headers.location), /^\/admin\/login/);
  });

  it('notices the device of a provider sign-in as of any sign-in (the new-device alert’s record)', async () => {
    const login = account();
    const first = new WebClient(app);
    const { response } = await signIn(first, login);
    assert.ok((response.cookies as { name: string }[]).some((cookie) => cookie.name === 'tessera_device'), 'the device cookie is set');
    await signIn(new WebClient(app), login);
    const user = (await users()).find((row) => row.email === `${login}@corp.example`)!;
    await app.services.mail.settled();
    const devices = await h.database.db.kysely.selectFrom('known_devices').select('id').where('user_id', '=', user.id).execute();
    assert.equal(devices.length, 2);
  });

  it('lands on /login saying so when the person refuses at the provider (access_denied), creating nothing', async () => {
    const client = new WebClient(app);
    const before = (await users()).length;
    const { response } = await signIn(client, { abort: true });
    await landsOnLogin(client, response, /cancelled/);
    assert.equal((await users()).length, before);
  });

  it('refuses a replayed callback (the state is used once) and a callback with another browser’s state', async () => {
    const login = account();
    const client = new WebClient(app);
    const { callback } = await signIn(client, login);
    assert.equal(await signedIn(client), true);
    // The same answer again, in the same browser (now signed in) and in another one.
    const replay = new WebClient(app);
    await landsOnLogin(replay, await replay.get(callback), /expired or was already used/);
    // A browser that started its own sign-in gets another's answer (a login CSRF).
    const victim = new WebClient(app);
    await victim.get('/auth/corp/redirect');
    await landsOnLogin(victim, await victim.get(callback), /expired or was already used/);
    // Its own sign-in is gone with it: used once, whatever the outcome.
  });

  const spoiled = [
    ['forged-key', 'an ID token signed with another key'],
    ['wrong-audience', 'an ID token for another client'],
    ['wrong-nonce', 'an ID token with another nonce'],
    ['wrong-issuer', 'an ID token from another issuer'],
    ['expired', 'an expired ID token'],
  ] as const;
  for (const [tamper, what] of spoiled) {
    it(`refuses ${what}: /login with one message, nothing created, no token in the log`, async () => {
      const login = account();
      provider.tamper = tamper;
      const client = new WebClient(app);
      const before = { users: (await users()).length, identities: (await identities()).length };
      const issued = provider.issuedTokens.length;
      const { response, callback } = await signIn(client, login);
      await landsOnLogin(client, response, /could not be verified/);
      assert.deepEqual({ users: (await users()).length, identities: (await identities()).length }, before);
      const token = provider.issuedTokens[issued];
      assert.ok(token !== undefined);
      const code = new URL(callback, APP_URL).searchParams.get('code')!;
      const log = h.logs.join('');
      assert.ok(!log.includes(token.split('.')[2]!), 'no ID token signature in the log');
      assert.ok(!log.includes(code), 'no authorization code in the log');
      assert.match(log, new RegExp(`"reason":"rejected"`));
    });
  }

  it('returns to a page of a listed first-party SPA origin, and never to any other', async () => {
    const login = account();
    const spa = new WebClient(app);
    const { response } = await signIn(spa, login, `/auth/corp/redirect?return_to=${encodeURIComponent('http://spa.localhost:5173/welcome?x=1')}`);
    assert.equal(response.headers.location, 'http://spa.localhost:5173/welcome?x=1');
    for (const target of ['http://evil.example/x', '//evil.example/x', 'https://spa.localhost:5173.evil.example/', 'javascript:alert(1)', 'http://user@spa.localhost:5173/']) {
      const client = new WebClient(app);
      const other = await signIn(client, login, `/auth/corp/redirect?return_to=${encodeURIComponent(target)}`);
      assert.equal(other.response.headers.location, '/dashboard', target);
    }
  });
});

describe('sign-in with a provider that cannot be reached', () => {
  it('starts anyway, lands on /login saying so, and reaches the provider once it answers', async () => {
    const port = await freePort();
    const h = await appFor({
      OIDC_PROVIDERS: 'corp',
      OIDC_CORP_ISSUER: `http://127.0.0.1:${port}`,
      OIDC_CORP_CLIENT_ID: 'tessera-test',
      OIDC_CORP_CLIENT_SECRET: 'secret',
    });
    try {
      const client = new WebClient(h.app);
      const response = await client.get('/auth/corp/redirect');
      assert.equal(response.headers.location, '/login');
      assert.match(statusMessage((await client.follow(response)).body) ?? '', /not available right now/);
      assert.match(h.logs.join(''), /OIDC provider discovery failed; will try again/);
      assert.equal((await h.database.db.kysely.selectFrom('users').select('id').execute()).length, 0);
      // The provider comes up: once the back-off is over (a second, then two…), the next click gets there.
      const provider = await startTestProvider([`${APP_URL}/auth/corp/callback`], { port });
      try {
        let location = '/login';
        for (let attempt = 0; attempt < 40 && location === '/login'; attempt += 1) {
          await new Promise((resolve) => setTimeout(resolve, 250));
          location = String((await new WebClient(h.app).get('/auth/corp/redirect')).headers.location);
        }
        assert.equal(new URL(location, APP_URL).origin, `http://127.0.0.1:${port}`);
      } finally {
        await provider.close();
      }
    } finally {
      await h.close();
    }
  });
});
