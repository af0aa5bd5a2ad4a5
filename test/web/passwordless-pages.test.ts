// The pages of an account without a password (made through a provider, issue 24 §2): /security
// offers no Remove on a passkey that is the last way in (nor Disconnect on the last provider), its
// notes say what a sensitive action will really ask for (a passkey or the connected provider, not
// a password), and the sign-in pages show one "or" before one group of other ways in. The panel's
// two-factor set-up, which asks an administrator for the password, takes a passkey of theirs
// instead (an administrator made through a provider, then promoted). On SQLite and PostgreSQL.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { FastifyInstance, LightMyRequestResponse } from 'fastify';
import { buildApp } from '../../src/app.js';
import { runInProcess } from '../cli/harness.js';
import type { Config } from '../../src/config.js';
import { createTestDatabase, createUser, testConfig, type TestDatabase } from '../helpers.js';
import { characters, decodeEntities, WebClient } from '../support/client.js';
import { startTestProvider, type TestProvider } from '../support/oidc-provider.js';
import { SoftPasskey } from './soft-passkey.js';
import { login } from './support.js';

const APP_URL = 'http://localhost:3000';
const PASSWORD_NOTE = /asked for your password|ask for your password/;

describe('the pages of an account without a password', () => {
  let provider: TestProvider;
  let database: TestDatabase;
  let config: Config;
  let app: FastifyInstance;
  let counter = 0;

  before(async () => {
    provider = await startTestProvider([`${APP_URL}/auth/corp/callback`]);
    database = await createTestDatabase();
    config = testConfig(provider.env('corp'));
    app = await buildApp(config, { db: database.db });
    await app.ready();
  });
  after(async () => {
    await app.close();
    await database.drop();
    await provider.close();
  });

  const roundTrip = async (client: WebClient, started: LightMyRequestResponse, who: string): Promise<LightMyRequestResponse> => {
    assert.equal(started.statusCode, 303, started.body);
    const back = await provider.drive(String(started.headers.location), who);
    return client.get(`${back.pathname}${back.search}`);
  };

  /** A browser signed in to a new account made through the provider (no password). */
  const providerAccount = async () => {
    counter += 1;
    const who = `nopass-${counter}-${Date.now()}`;
    provider.accounts.set(who, { email: `${who}@corp.example`, email_verified: true, name: `No Pass ${counter}` });
    const client = new WebClient(app);
    await roundTrip(client, await client.get('/auth/corp/redirect'), who);
    const user = await database.db.kysely.selectFrom('users').selectAll().where('email', '=', `${who}@corp.example`).executeTakeFirstOrThrow();
    assert.equal(user.password, null);
    return { who, client, user };
  };

  const confirmWithProvider = async (client: WebClient, who: string) => {
    await client.get('/user/confirm-password');
    return roundTrip(client, await client.post('/auth/corp/confirm'), who);
  };

  /** A software passkey registered by the signed-in, confirmed client. */
  const addPasskey = async (client: WebClient, name = 'Laptop') => {
    const passkey = new SoftPasskey();
    await client.get('/security');
    const options = await client.postJson('/user/passkeys/options', { name });
    assert.equal(options.statusCode, 200, options.body);
    const created = await client.postJson('/user/passkeys', { response: passkey.create(options.json().options) });
    assert.equal(created.statusCode, 201, created.body);
    return passkey;
  };

  const passkeyRow = (html: string) => /<tr data-passkey-id="[^"]*">([\s\S]*?)<\/tr>/.exec(html)?.[1] ?? '';
  const text = (html: string) => decodeEntities(html.replace(/<[^>]+>/g, ' ')).replace(/\s+/g, ' ');

  it('shows no Remove on the passkey that is the last way in, and Remove again once there is another', async () => {
    const { who, client } = await providerAccount();
    await confirmWithProvider(client, who);
    await addPasskey(client);
    // Two ways in (the provider and the passkey): either may go.
    let security = await client.get('/security');
    assert.match(passkeyRow(security.body), /aria-label="Remove the passkey Laptop"/);
    assert.match(security.body, /aria-label="Disconnect Corp ID"/);
    const unlinked = await client.post('/auth/corp/unlink');
    assert.equal(unlinked.statusCode, 303);
    // The passkey is all that is left: no button the server would refuse, and the reason instead.
    security = await client.get('/security');
    const row = passkeyRow(security.body);
    assert.doesNotMatch(row, /Remove/);
    assert.match(text(row), /Only way to log in/);
    assert.match(text(security.body), /set a password or connect an account to remove it/i);
    // A second passkey: each may go again.
    await addPasskey(client, 'Phone');
    security = await client.get('/security');
    assert.equal([...security.body.matchAll(/aria-label="Remove the passkey /g)].length, 2);
  });

  it('says what the confirmation will ask for: the connected provider, then a passkey or it; never a password', async () => {
    const { who, client } = await providerAccount();
    let security = text((await client.get('/security')).body);
    assert.doesNotMatch(security, PASSWORD_NOTE);
    assert.match(security, /Enabling, disabling and new recovery codes ask you to confirm it is you with Corp ID first\./);
    assert.match(security, /You will be asked to confirm it is you with Corp ID first\./);
    await confirmWithProvider(client, who);
    await addPasskey(client);
    // Confirmed now: the notes are gone; the next session (a new sign-in) sees both ways.
    const again = new WebClient(app);
    await roundTrip(again, await again.get('/auth/corp/redirect'), who);
    security = text((await again.get('/security')).body);
    assert.doesNotMatch(security, PASSWORD_NOTE);
    assert.match(security, /You will be asked to confirm it is you with a passkey or Corp ID first\./);
    // Two-factor's introduction does not speak of a password either.
    assert.doesNotMatch(security, /after your password/);
    // In French too.
    await again.get('/locale/fr');
    const french = text((await again.get('/security')).body);
    assert.match(characters(french), /Il vous sera d’abord demandé de confirmer votre identité avec une clé d’accès ou Corp ID\./);
    assert.doesNotMatch(french, /mot de passe vous sera/);
  });

  it('says a two-factor set-up under way in another session waits for a confirmation, not for a password', async () => {
    const { who, client } = await providerAccount();
    await confirmWithProvider(client, who);
    await client.get('/security');
    assert.equal((await client.post('/user/two-factor')).statusCode, 303);
    const again = new WebClient(app);
    await roundTrip(again, await again.get('/auth/corp/redirect'), who);
    const security = text((await again.get('/security')).body);
    assert.match(security, /Its QR code and setup key are shown only after you confirm it is you\./);
    assert.match(security, /Confirm it is you to continue the set-up/);
    assert.doesNotMatch(security, /your password/);
  });

  it('shows one "or" before one group of other ways in on /login and /register, and no provider on /admin/login', async () => {
    const client = new WebClient(app);
    const separators = (html: string) => [...html.matchAll(/class="[^"]*\bpasskey-or\b/g)].length;
    const login = (await client.get('/login')).body;
    assert.equal(separators(login), 1, 'one separator on /login');
    assert.match(login, /class="sign-in-alternatives"[\s\S]*Sign in with a passkey[\s\S]*Continue with Corp ID/);
    const register = (await client.get('/register')).body;
    assert.equal(separators(register), 1, 'one separator on /register');
    const admin = (await client.get('/admin/login')).body;
    assert.equal(separators(admin), 1, 'the passkey’s separator on /admin/login');
    assert.doesNotMatch(admin, /Continue with|\/auth\/corp\//, 'a provider never opens the panel');
  });

  it('shows one "or" on the confirmation page of an account with a password, a passkey and a provider', async () => {
    const password = 'correct horse battery';
    const user = await createUser(app, { password });
    const client = new WebClient(app);
    await login(client, user.email, password);
    await client.get('/user/confirm-password');
    await client.post('/user/confirm-password', { password });
    await addPasskey(client);
    counter += 1;
    const who = `linked-${counter}-${Date.now()}`;
    provider.accounts.set(who, { email: `${who}@corp.example`, email_verified: true });
    await roundTrip(client, await client.post('/auth/corp/link'), who);
    const page = (await client.get('/user/confirm-password')).body;
    assert.match(page, /name="password"/);
    assert.match(page, /Confirm with a passkey[\s\S]*Confirm with Corp ID/);
    assert.equal([...page.matchAll(/class="[^"]*\bpasskey-or\b/g)].length, 1);
  });

  it('lets the pages’ forms lead to a provider (Connect, Confirm with …): its origin is in the CSP’s form-action', async () => {
    // A browser applies form-action to the redirect that answers a form: without the provider's
    // origin, Chromium blocks "Confirm with Corp ID" and "Connect" at the 303 to the provider.
    const page = await new WebClient(app).get('/login');
    const formAction = /form-action ([^;]+)/.exec(String(page.headers['content-security-policy']))?.[1] ?? '';
    assert.deepEqual(formAction.split(' '), ["'self'", new URL(provider.issuer).origin]);
  });

  it('lets an administrator without a password begin the panel’s two-factor set-up with a passkey of theirs', async () => {
    const { who, client, user } = await providerAccount();
    await confirmWithProvider(client, who);
    const passkey = await addPasskey(client);
    const promoted = await runInProcess(['admin:promote', user.email], { db: database.db, config });
    assert.equal(promoted.code, 0, promoted.stderr);
    // The panel's own sign-in: the passkey (a provider never opens the panel).
    const panel = new WebClient(app);
    await panel.get('/admin/login');
    const signInOptions = (await panel.postJson('/admin/passkeys/login/options', {})).json().options;
    const signedIn = await panel.postJson('/admin/passkeys/login', { response: passkey.get(signInOptions) });
    assert.equal(signedIn.statusCode, 200, signedIn.body);

    const page = (await panel.get('/admin/two-factor')).body;
    assert.doesNotMatch(page, /name="password"/, 'no password form for an administrator without one');
    assert.match(page, /Confirm with a passkey/);
    // Another passkey (here, of nobody) confirms nothing.
    const stranger = await panel.postJson('/admin/two-factor/passkey', { response: new SoftPasskey().get((await panel.postJson('/admin/two-factor/passkey/options', {})).json().options) });
    assert.equal(stranger.statusCode, 422);
    assert.equal(await database.db.kysely.selectFrom('users').select('two_factor_secret').where('id', '=', user.id).executeTakeFirstOrThrow().then((row) => row.two_factor_secret), null);
    // A challenge of the site's confirmation, in the same browser, does not answer the panel's.
    await panel.get('/login');
    await roundTrip(panel, await panel.get('/auth/corp/redirect'), who);
    await panel.get('/user/confirm-password');
    const siteAnswer = await panel.postJson('/user/confirm-password/passkey/options', {});
    assert.equal(siteAnswer.statusCode, 200, siteAnswer.body);
    const siteOptions = siteAnswer.json().options;
    assert.equal((await panel.postJson('/admin/two-factor/passkey', { response: passkey.get(siteOptions) })).statusCode, 422);
    assert.doesNotMatch((await panel.get('/admin/two-factor')).body, /data-secret>/);
    await panel.get('/admin/two-factor');
    const options = (await panel.postJson('/admin/two-factor/passkey/options', {})).json().options;
    const confirmed = await panel.postJson('/admin/two-factor/passkey', { response: passkey.get(options) });
    assert.equal(confirmed.statusCode, 200, confirmed.body);
    assert.equal(confirmed.json().redirect, '/admin/two-factor');
    const setup = (await panel.get('/admin/two-factor')).body;
    assert.match(setup, /data-secret>[A-Z2-7 ]+</, 'the key is shown: the set-up began');
  });

  it('takes no passkey of another account, nor one answer twice, on the panel', async () => {
    const { who, client, user } = await providerAccount();
    await confirmWithProvider(client, who);
    const passkey = await addPasskey(client);
    assert.equal((await runInProcess(['admin:promote', user.email], { db: database.db, config })).code, 0);
    const other = await providerAccount();
    await confirmWithProvider(other.client, other.who);
    const othersKey = await addPasskey(other.client);
    const panel = new WebClient(app);
    await panel.get('/admin/login');
    const signedIn = await panel.postJson('/admin/passkeys/login', { response: passkey.get((await panel.postJson('/admin/passkeys/login/options', {})).json().options) });
    assert.equal(signedIn.statusCode, 200, signedIn.body);
    await panel.get('/admin/two-factor');
    const options = (await panel.postJson('/admin/two-factor/passkey/options', {})).json().options;
    assert.equal((await panel.postJson('/admin/two-factor/passkey', { response: othersKey.get(options) })).statusCode, 422);
    // The challenge went with the refused answer: the right passkey on it is refused too.
    assert.equal((await panel.postJson('/admin/two-factor/passkey', { response: passkey.get(options) })).statusCode, 422);
    assert.doesNotMatch((await panel.get('/admin/two-factor')).body, /data-secret>/);
  });
});
