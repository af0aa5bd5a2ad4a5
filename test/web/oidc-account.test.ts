// Accounts and providers, signed in: connecting a provider from /security (after a confirmation)
// and disconnecting it, never the last way in; an account made through a provider has no
// password, and every page that assumed one works: the password form and the API refuse it as a
// wrong password, the provider confirms the person (a fresh login: prompt=login, max_age=0),
// /profile sets a first password, the account can be deleted. On SQLite and PostgreSQL.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { FastifyInstance, LightMyRequestResponse } from 'fastify';
import { buildApp } from '../../src/app.js';
import { createTestDatabase, createUser, testConfig, type TestDatabase } from '../helpers.js';
import { statusMessage, WebClient } from '../support/client.js';
import { startTestProvider, type TestProvider } from '../support/oidc-provider.js';
import { login } from './support.js';

const APP_URL = 'http://localhost:3000';
const PASSWORD = 'correct horse battery';

describe('connected accounts and accounts without a password', () => {
  let provider: TestProvider;
  let database: TestDatabase;
  let app: FastifyInstance;
  let counter = 0;

  before(async () => {
    provider = await startTestProvider([`${APP_URL}/auth/corp/callback`]);
    database = await createTestDatabase();
    app = await buildApp(testConfig(provider.env('corp')), { db: database.db });
    await app.ready();
  });
  after(async () => {
    await app.close();
    await database.drop();
    await provider.close();
  });

  const account = (claims: { email?: string } = {}) => {
    counter += 1;
    const name = `member-${counter}-${Date.now()}`;
    provider.accounts.set(name, { email: `${name}@corp.example`, email_verified: true, name: `Member ${counter}`, ...claims });
    return name;
  };
  /** Through the provider's pages and back; the app's answer to the callback. */
  const roundTrip = async (client: WebClient, started: LightMyRequestResponse, who: string): Promise<LightMyRequestResponse> => {
    assert.equal(started.statusCode, 303, started.body);
    const back = await provider.drive(String(started.headers.location), who);
    return client.get(`${back.pathname}${back.search}`);
  };
  /** A browser signed in to a new account made through the provider. */
  const providerAccount = async () => {
    const who = account();
    const client = new WebClient(app);
    await roundTrip(client, await client.get('/auth/corp/redirect'), who);
    const user = await database.db.kysely.selectFrom('users').selectAll().where('email', '=', `${who}@corp.example`).executeTakeFirstOrThrow();
    return { who, client, user };
  };
  /** Confirms the signed-in person through the provider (the confirmation page's button). */
  const confirmWithProvider = async (client: WebClient, who: string) => {
    await client.get('/user/confirm-password');
    const started = await client.post('/auth/corp/confirm');
    const url = new URL(String(started.headers.location));
    assert.equal(url.searchParams.get('prompt'), 'login');
    assert.equal(url.searchParams.get('max_age'), '0');
    return roundTrip(client, started, who);
  };
  const identitiesOf = (userId: number) => database.db.kysely.selectFrom('identities').selectAll().where('user_id', '=', userId).execute();

  it('connects a provider to a password account from /security after a password confirmation, then signs in with it', async () => {
    const user = await createUser(app, { password: PASSWORD });
    const client = new WebClient(app);
    await login(client, user.email, PASSWORD);
    const security = await client.get('/security');
    assert.match(security.body, /Connected accounts/);
    assert.match(security.body, /aria-label="Connect Corp ID"/);
    // Not confirmed yet: the confirmation first.
    const asked = await client.post('/auth/corp/link');
    assert.equal(asked.headers.location, '/user/confirm-password');
    await client.get('/user/confirm-password');
    await client.post('/user/confirm-password', { password: PASSWORD });
    await client.get('/security');
    const who = account({ email: `other-address-${counter}@corp.example` });
    const linked = await roundTrip(client, await client.post('/auth/corp/link'), who);
    assert.equal(linked.headers.location, '/security');
    const page = await client.follow(linked);
    assert.match(statusMessage(page.body) ?? '', /Corp ID account is now connected/);
    assert.match(page.body, /aria-label="Disconnect Corp ID"/);
    assert.deepEqual((await identitiesOf(user.id)).map((row) => row.subject), [who]);
    // Another browser: the provider now opens this account.
    const other = new WebClient(app);
    await roundTrip(other, await other.get('/auth/corp/redirect'), who);
    assert.equal((await other.get('/dashboard')).statusCode, 200);
    assert.match((await other.get('/profile')).body, new RegExp(user.email.replace(/[.+]/g, '\\$&')));
  });

  it('refuses to connect a provider account that another account has, changing nothing', async () => {
    const { who } = await providerAccount();
    const user = await createUser(app, { password: PASSWORD });
    const client = new WebClient(app);
    await login(client, user.email, PASSWORD);
    await client.submit('/user/confirm-password', '/user/confirm-password', { password: PASSWORD });
    await client.get('/security');
    const response = await roundTrip(client, await client.post('/auth/corp/link'), who);
    assert.match(statusMessage((await client.follow(response)).body) ?? '', /connected to another account/);
    assert.deepEqual(await identitiesOf(user.id), []);
  });

  it('disconnects a provider from an account that keeps its password', async () => {
    const user = await createUser(app, { password: PASSWORD });
    const client = new WebClient(app);
    await login(client, user.email, PASSWORD);
    await client.submit('/user/confirm-password', '/user/confirm-password', { password: PASSWORD });
    await client.get('/security');
    await roundTrip(client, await client.post('/auth/corp/link'), account());
    await client.get('/security');
    const response = await client.post('/auth/corp/unlink');
    assert.match(statusMessage((await client.follow(response)).body) ?? '', /Corp ID was disconnected/);
    assert.deepEqual(await identitiesOf(user.id), []);
  });

  it('never removes the last way in: no password, no passkey, one provider', async () => {
    const { who, client, user } = await providerAccount();
    await confirmWithProvider(client, who);
    const security = await client.get('/security');
    assert.match(security.body, /Only way to log in/);
    assert.doesNotMatch(security.body, /aria-label="Disconnect Corp ID"/);
    const response = await client.post('/auth/corp/unlink');
    assert.match(statusMessage((await client.follow(response)).body) ?? '', /only way left to log in/);
    const json = await client.post('/auth/corp/unlink', {}, { headers: { accept: 'application/json' } });
    assert.equal(json.statusCode, 409);
    assert.equal((await identitiesOf(user.id)).length, 1);
  });

  it('never removes the last passkey of an account left with no password and no provider', async () => {
    const { who, client, user } = await providerAccount();
    const now = new Date().toISOString();
    const passkey = await database.db.kysely
      .insertInto('passkeys')
      .values({ user_id: user.id, name: 'Laptop', credential_id: `cred-${user.id}`, public_key: 'pk', last_used_at: null, created_at: now })
      .returning('id')
      .executeTakeFirstOrThrow();
    await confirmWithProvider(client, who);
    await client.get('/security');
    // The passkey stays: the provider may go.
    const unlinked = await client.post('/auth/corp/unlink');
    assert.match(statusMessage((await client.follow(unlinked)).body) ?? '', /Corp ID was disconnected/);
    // Now the passkey is the only way in.
    const refused = await client.post(`/user/passkeys/${passkey.id}/delete`);
    assert.match(statusMessage((await client.follow(refused)).body) ?? '', /only way left to log in/);
    assert.equal((await database.db.kysely.selectFrom('passkeys').select('id').where('user_id', '=', user.id).execute()).length, 1);
  });

  it('refuses the password of an account that has none, as a wrong one: the login form and POST /api/tokens', async () => {
    const { user } = await providerAccount();
    const known = await createUser(app, { password: PASSWORD });
    const attempt = async (email: string) => {
      const client = new WebClient(app);
      await client.get('/login');
      const form = await client.post('/login', { email, password: 'whatever-it-is' });
      const api = await app.inject({ method: 'POST', url: '/api/tokens', payload: { email, password: 'whatever-it-is', device_name: 'x' } });
      return { form: form.statusCode, formBody: form.body.replace(/name="_token" value="[^"]+"|value="[^"]*@[^"]*"/g, ''), api: api.statusCode, apiBody: api.body };
    };
    const passwordless = await attempt(user.email);
    const wrong = await attempt(known.email);
    assert.equal(passwordless.form, wrong.form);
    assert.equal(passwordless.api, wrong.api);
    assert.equal(passwordless.apiBody, wrong.apiBody);
    assert.equal(passwordless.formBody, wrong.formBody);
  });

  it('confirms the person through the provider (a fresh login), and not through another account of it', async () => {
    const { who, client } = await providerAccount();
    const asked = await client.get('/user/delete');
    assert.equal(asked.headers.location, '/user/confirm-password');
    const page = await client.get('/user/confirm-password');
    assert.match(page.body, /Confirm with Corp ID/);
    assert.match(page.body, /Your account has no password/);
    assert.doesNotMatch(page.body, /name="password"/, 'no password form for an account without one');
    // Someone else's account at the provider confirms nothing.
    const stranger = account();
    const refused = await confirmWithProvider(client, stranger);
    assert.equal(refused.headers.location, '/user/confirm-password');
    assert.equal((await client.get('/user/delete')).headers.location, '/user/confirm-password');
    // The person's own: back to the page that asked, confirmed.
    const confirmed = await confirmWithProvider(client, who);
    assert.equal(confirmed.headers.location, '/user/delete');
    assert.equal((await client.get('/user/delete')).statusCode, 200);
  });

  it('deletes an account that has no password, its identities with it', async () => {
    const { who, client, user } = await providerAccount();
    await confirmWithProvider(client, who);
    await client.get('/user/delete');
    const deleted = await client.post('/user/delete');
    assert.equal(deleted.statusCode, 303);
    assert.equal(await database.db.kysely.selectFrom('users').select('id').where('id', '=', user.id).executeTakeFirst(), undefined);
    assert.deepEqual(await identitiesOf(user.id), []);
  });

  it('offers "Set a password" on /profile to an account without one, after a confirmation, and never over an existing password', async () => {
    const { who, client, user } = await providerAccount();
    const profile = await client.get('/profile');
    assert.match(profile.body, /Set a password/);
    assert.doesNotMatch(profile.body, /name="current_password"/);
    const asked = await client.post('/profile/set-password', { password: 'a new long passphrase', password_confirmation: 'a new long passphrase' });
    assert.equal(asked.headers.location, '/user/confirm-password');
    await confirmWithProvider(client, who);
    await client.get('/profile');
    const weak = await client.post('/profile/set-password', { password: 'password', password_confirmation: 'password' });
    assert.equal(weak.statusCode, 422);
    const set = await client.post('/profile/set-password', { password: 'a new long passphrase', password_confirmation: 'a new long passphrase' });
    assert.match(statusMessage((await client.follow(set)).body) ?? '', /password has been set/);
    assert.match((await client.get('/profile')).body, /name="current_password"/);
    // The password now signs in, and cannot be replaced through this form.
    const other = new WebClient(app);
    await login(other, user.email, 'a new long passphrase');
    const again = await client.post('/profile/set-password', { password: 'another long passphrase', password_confirmation: 'another long passphrase' });
    assert.match(statusMessage((await client.follow(again)).body) ?? '', /already has a password/);
    const fresh = new WebClient(app);
    await login(fresh, user.email, 'a new long passphrase');
  });
});
