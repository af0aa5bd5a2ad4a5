// Pre-account takeover through a provider (issue 24 §3): someone whose provider account claims
// another person's address with email_verified false gets an account with that address (not
// verified) and a linked identity. When the address's owner resets the password (the link proves
// the address), every way in the reset did not set goes: the provider identities, the passkeys
// and a two-factor sign-in (its secret is the earlier holder's), and the address counts as
// verified. An account whose address was already verified keeps them. Real provider on loopback,
// real SMTP server; SQLite and PostgreSQL.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { LightMyRequestResponse } from 'fastify';
import { createUser, type TestApp } from '../helpers.js';
import { WebClient } from '../support/client.js';
import { startTestProvider, type TestProvider } from '../support/oidc-provider.js';
import { enableTwoFactor, reload } from '../support/two-factor-sign-in.js';
import { linkIn, type MailServer } from './mail-server.js';
import { appWithMail, closeAppWithMail, isLoggedIn } from './support.js';

const APP_URL = 'http://localhost:3000';
const NEW_PASSWORD = 'the owner is back 123';

describe('a password reset takes an unverified account back from its earlier holder', () => {
  let provider: TestProvider;
  let mail: MailServer;
  let t: TestApp;
  let counter = 0;

  before(async () => {
    provider = await startTestProvider([`${APP_URL}/auth/corp/callback`]);
    ({ t, mail } = await appWithMail(provider.env('corp')));
  });
  after(async () => {
    await closeAppWithMail(t, mail);
    await provider.close();
  });

  const db = () => t.db.kysely;

  /** Through the provider's pages and back: the app's answer to the callback. */
  const providerSignIn = async (who: string): Promise<{ client: WebClient; answer: LightMyRequestResponse }> => {
    const client = new WebClient(t.app);
    const started = await client.get('/auth/corp/redirect');
    assert.equal(started.statusCode, 303, started.body);
    const back = await provider.drive(String(started.headers.location), who);
    return { client, answer: await client.get(`${back.pathname}${back.search}`) };
  };

  /** The owner asks for a link at the address and follows it with a new password. */
  const ownerResets = async (email: string): Promise<LightMyRequestResponse> => {
    const client = new WebClient(t.app);
    await client.get('/forgot-password');
    await client.post('/forgot-password', { email });
    await t.app.services.mail.settled();
    const messages = mail.to(email);
    const link = new URL(linkIn(messages[messages.length - 1]!, `${APP_URL}/reset-password/`));
    await client.get(`${link.pathname}${link.search}`);
    return client.post('/reset-password', {
      token: decodeURIComponent(link.pathname.split('/').pop()!),
      email: link.searchParams.get('email')!,
      password: NEW_PASSWORD,
      password_confirmation: NEW_PASSWORD,
    });
  };

  const addPasskey = (userId: number) =>
    db()
      .insertInto('passkeys')
      .values({ user_id: userId, name: 'Attacker key', credential_id: `cred-${userId}-${counter}`, public_key: 'pk', created_at: new Date().toISOString() })
      .execute();

  it("removes the earlier holder's identity, passkey and two-factor, and marks the address verified", async () => {
    counter += 1;
    const victim = `victim-${counter}@example.com`;
    const attacker = `attacker-${counter}`;
    provider.accounts.set(attacker, { email: victim, email_verified: false, name: 'Not the owner' });
    const first = await providerSignIn(attacker);
    assert.equal(first.answer.statusCode, 303);
    const made = await db().selectFrom('users').selectAll().where('email', '=', victim).executeTakeFirstOrThrow();
    assert.equal(made.email_verified_at, null);
    assert.equal(made.password, null);
    // What the earlier holder could add while signed in: a passkey and a two-factor sign-in.
    await addPasskey(made.id);
    await enableTwoFactor(t.app, made.id);

    const reset = await ownerResets(victim);
    assert.equal(reset.statusCode, 303, reset.body);

    const after = await reload(t.app, made.id);
    assert.notEqual(after.email_verified_at, null, 'the link proved the address');
    assert.equal(after.two_factor_secret, null);
    assert.equal(after.two_factor_confirmed_at, null);
    assert.deepEqual(await db().selectFrom('identities').selectAll().where('user_id', '=', made.id).execute(), []);
    assert.deepEqual(await db().selectFrom('passkeys').selectAll().where('user_id', '=', made.id).execute(), []);
    assert.equal(await isLoggedIn(first.client), false, "the earlier holder's session ended");

    // The provider account no longer opens it: a new sign-in meets an address another account has.
    const again = await providerSignIn(attacker);
    assert.equal(again.answer.headers.location, '/login');
    assert.equal(await isLoggedIn(again.client), false);
    assert.deepEqual(await db().selectFrom('identities').selectAll().where('user_id', '=', made.id).execute(), []);
  });

  it('leaves the ways in of an account whose address was already verified', async () => {
    counter += 1;
    const owner = `owner-${counter}`;
    provider.accounts.set(owner, { email: `${owner}@example.com`, email_verified: true, name: 'Owner' });
    await providerSignIn(owner);
    const made = await db().selectFrom('users').selectAll().where('email', '=', `${owner}@example.com`).executeTakeFirstOrThrow();
    assert.notEqual(made.email_verified_at, null);
    await addPasskey(made.id);
    await enableTwoFactor(t.app, made.id);
    assert.equal((await ownerResets(made.email)).statusCode, 303);
    const after = await reload(t.app, made.id);
    assert.notEqual(after.two_factor_confirmed_at, null);
    assert.equal((await db().selectFrom('identities').selectAll().where('user_id', '=', made.id).execute()).length, 1);
    assert.equal((await db().selectFrom('passkeys').selectAll().where('user_id', '=', made.id).execute()).length, 1);
  });

  it('does the same for an unverified account made with a password', async () => {
    const user = await createUser(t.app, { email: `unverified-${++counter}@example.com`, password: 'someone else 123', verified: false });
    await addPasskey(user.id);
    assert.equal((await ownerResets(user.email)).statusCode, 303);
    const after = await reload(t.app, user.id);
    assert.notEqual(after.email_verified_at, null);
    assert.deepEqual(await db().selectFrom('passkeys').selectAll().where('user_id', '=', user.id).execute(), []);
  });
});
