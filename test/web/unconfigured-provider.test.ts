// The last way in counts only ways that open the account today. A link to a provider that is no
// longer in OIDC_PROVIDERS (the operator removed it) opens nothing: it does not make the last
// configured provider, or the last passkey, removable. SQLite and PostgreSQL.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { LastWayInError } from '../../src/modules/identities/identities.service.js';
import { buildTestApp, type TestApp } from '../helpers.js';
import { startTestProvider, type TestProvider } from '../support/oidc-provider.js';

describe('a provider no longer configured is no way in', () => {
  let provider: TestProvider;
  let t: TestApp;
  let counter = 0;

  before(async () => {
    provider = await startTestProvider(['http://localhost:3000/auth/corp/callback']);
    t = await buildTestApp({ LOG_LEVEL: 'error', ...provider.env('corp') });
  });
  after(async () => {
    await t.close();
    await provider.close();
  });

  /** An account made through corp (no password), also linked to "retired", a provider since removed. */
  const account = async () => {
    counter += 1;
    const made = await t.app.services.identities.signIn({ provider: 'corp', subject: `s-${counter}`, email: `retired-${counter}@example.com`, emailVerified: true, name: null });
    assert.equal(made.kind, 'created');
    const now = new Date().toISOString();
    await t.db.kysely.insertInto('identities').values({ user_id: made.user.id, provider: 'retired', subject: `r-${counter}`, email: null, created_at: now, last_used_at: now }).execute();
    return made.user;
  };

  it('keeps the last configured provider', async () => {
    const user = await account();
    assert.equal(await t.app.services.identities.isLastWayIn(user.id, 'corp'), true);
    await assert.rejects(t.app.services.identities.unlink(user.id, 'corp'), LastWayInError);
    const left = await t.db.kysely.selectFrom('identities').select('provider').where('user_id', '=', user.id).orderBy('provider').execute();
    assert.deepEqual(left.map((row) => row.provider), ['corp', 'retired']);
  });

  it('keeps the last passkey', async () => {
    const user = await account();
    await t.app.services.identities.unlink(user.id, 'corp').catch(() => undefined);
    await t.db.kysely.deleteFrom('identities').where('user_id', '=', user.id).where('provider', '=', 'corp').execute();
    const key = await t.db.kysely
      .insertInto('passkeys')
      .values({ user_id: user.id, name: 'Only key', credential_id: `only-${counter}`, public_key: 'pk', created_at: new Date().toISOString() })
      .returning('id')
      .executeTakeFirstOrThrow();
    await assert.rejects(t.app.services.passkeys.remove(user.id, key.id), LastWayInError);
    assert.equal(await t.app.services.identities.passkeyIsLastWayIn(user.id), true);
  });
});
