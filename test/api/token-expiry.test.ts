// Issue 28 §8, per-token expiry as Sanctum 4 offers: POST /api/tokens takes an optional
// `expires_at` (in the future, no later than SANCTUM_EXPIRATION allows, else 422 on the field,
// checked before the password and storing nothing), and a token refuses to work with the same
// 401 from the moment its own expiry passes, even while its lookup is kept in memory.
import assert from 'node:assert/strict';
import { setTimeout as sleep } from 'node:timers/promises';
import { after, before, describe, it } from 'node:test';
import { bearer, buildTestApp, createUser, type TestApp } from '../helpers.js';
import { splitToken, tokenRow } from './support.js';

const UNAUTHENTICATED = { message: 'Unauthenticated.', errors: {} };
const MINUTE = 60_000;

describe('POST /api/tokens with expires_at, SANCTUM_EXPIRATION=60', () => {
  let t: TestApp;
  let user: Awaited<ReturnType<typeof createUser>>;
  before(async () => {
    t = await buildTestApp({ SANCTUM_EXPIRATION: '60' });
    user = await createUser(t.app, { email: 'expiry@example.com', password: 'expiry-password' });
  });
  after(() => t.close());

  const issue = (fields: Record<string, unknown>) =>
    t.app.inject({ method: 'POST', url: '/api/tokens', payload: { email: user.email, password: 'expiry-password', device_name: 'cli', ...fields }, headers: { accept: 'application/json' } });
  const tokenCount = async () => (await t.db.kysely.selectFrom('personal_access_tokens').select('id').where('user_id', '=', user.id).execute()).length;

  it('stores the expiry asked for, which the token keeps', async () => {
    const at = new Date(Date.now() + 30 * MINUTE).toISOString();
    const response = await issue({ expires_at: at });
    assert.equal(response.statusCode, 200, response.body);
    const token = (response.json() as { token: string }).token;
    assert.equal((await tokenRow(t.db, splitToken(token).id))?.expires_at, at);
    assert.equal((await t.app.inject({ url: '/api/user', headers: bearer(token) })).statusCode, 200);
  });

  it('accepts the very end of the global lifetime, and an offset other than Z', async () => {
    assert.equal((await issue({ expires_at: new Date(Date.now() + 59 * MINUTE).toISOString() })).statusCode, 200);
    const inAnHour = new Date(Date.now() + 30 * MINUTE + 2 * 3_600_000);
    // The same moment two hours ahead of UTC.
    const offset = `${new Date(inAnHour.getTime()).toISOString().slice(0, 19)}+02:00`;
    const response = await issue({ expires_at: offset });
    assert.equal(response.statusCode, 200, response.body);
    const row = await tokenRow(t.db, splitToken((response.json() as { token: string }).token).id);
    assert.equal(Date.parse(row?.expires_at ?? ''), Date.parse(offset));
  });

  const refusals: { name: string; value: () => unknown; message: string }[] = [
    { name: 'a moment past', value: () => new Date(Date.now() - MINUTE).toISOString(), message: 'The expiry date must be in the future.' },
    { name: 'later than the global lifetime allows', value: () => new Date(Date.now() + 61 * MINUTE).toISOString(), message: 'The expiry date must be no later than' },
    { name: 'years away', value: () => '2999-01-01T00:00:00Z', message: 'The expiry date must be no later than' },
    { name: 'not a date', value: () => 'tomorrow', message: 'The expiry date field must be a valid date.' },
    { name: 'a day without a time', value: () => '2030-01-01', message: 'The expiry date field must be a valid date.' },
    { name: 'a date that does not exist', value: () => '2026-02-30T10:00:00Z', message: 'The expiry date field must be a valid date.' },
    { name: 'a number', value: () => 1_900_000_000, message: 'The expiry date field must be a string.' },
  ];
  for (const refusal of refusals) {
    it(`refuses ${refusal.name} with 422 on expires_at and makes no token`, async () => {
      const before = await tokenCount();
      const response = await issue({ expires_at: refusal.value() });
      assert.equal(response.statusCode, 422, response.body);
      const body = response.json() as { message: string; errors: Record<string, string[]> };
      assert.deepEqual(Object.keys(body.errors), ['expires_at']);
      assert.ok(body.errors.expires_at?.[0]?.includes(refusal.message), body.errors.expires_at?.[0]);
      assert.equal(await tokenCount(), before);
    });
  }

  it('checks the expiry before the password: a bad one is a 422 whatever the password', async () => {
    const response = await issue({ password: 'wrong', expires_at: new Date(Date.now() - MINUTE).toISOString() });
    assert.equal(response.statusCode, 422);
  });

  it('documents expires_at as an optional date-time of the body', async () => {
    const document = (await t.app.inject({ url: '/api/openapi.json' })).json() as {
      paths: Record<string, { post: { requestBody: { content: Record<string, { schema: { properties: Record<string, { format?: string; description?: string }>; required?: string[] } }> } } }>;
    };
    const schema = document.paths['/api/tokens']?.post.requestBody.content['application/json']?.schema;
    assert.equal(schema?.properties.expires_at?.format, 'date-time');
    assert.match(schema?.properties.expires_at?.description ?? '', /422/);
    assert.ok(!(schema?.required ?? []).includes('expires_at'));
  });
});

describe('a token with its own expiry, SANCTUM_EXPIRATION null', () => {
  let t: TestApp;
  let user: Awaited<ReturnType<typeof createUser>>;
  before(async () => {
    t = await buildTestApp();
    user = await createUser(t.app, { email: 'own-expiry@example.com', password: 'expiry-password' });
  });
  after(() => t.close());

  it('accepts any future date when tokens have no global lifetime', async () => {
    const response = await t.app.inject({ method: 'POST', url: '/api/tokens', payload: { email: user.email, password: 'expiry-password', device_name: 'far', expires_at: '2999-01-01T00:00:00Z' } });
    assert.equal(response.statusCode, 200, response.body);
  });

  it('works until its own expiry and is refused with 401 from that moment, though its lookup is kept in memory', async () => {
    const at = Date.now() + 1500;
    const response = await t.app.inject({ method: 'POST', url: '/api/tokens', payload: { email: user.email, password: 'expiry-password', device_name: 'short', expires_at: new Date(at).toISOString() } });
    assert.equal(response.statusCode, 200, response.body);
    const token = (response.json() as { token: string }).token;
    const call = () => t.app.inject({ url: '/api/user', headers: bearer(token) });
    // Two calls: the second is answered from the kept lookup (the first wrote last_used_at).
    assert.equal((await call()).statusCode, 200);
    assert.equal((await call()).statusCode, 200);
    await sleep(Math.max(0, at - Date.now()) + 50);
    const refused = await call();
    assert.equal(refused.statusCode, 401);
    assert.deepEqual(refused.json(), UNAUTHENTICATED);
    // The row is still there: only its time has passed.
    assert.ok(await tokenRow(t.db, splitToken(token).id));
  });

  it('is refused by TokenService.authenticate, the check every face shares, from its own expiry on', async () => {
    const issued = await t.app.services.tokens.issue(user.id, 'domain', ['*'], new Date(Date.now() + 800));
    const credentials = t.app.services.tokens.parse(issued.plaintext);
    assert.ok(await t.app.services.tokens.authenticate(credentials));
    await sleep(900);
    assert.equal(await t.app.services.tokens.authenticate(credentials), null);
  });
});
