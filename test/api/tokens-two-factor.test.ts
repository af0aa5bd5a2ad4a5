// POST /api/tokens for an account with two-factor on: the password first (401 as before), then
// `code` or `recovery_code` (422 on errors.code without one, 401 for a wrong one, 429 past 5 code
// attempts a minute per account + IP), and the OpenAPI document says so.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { INVALID_CREDENTIALS } from '../../src/http/api/tokens.js';
import { buildTestApp, createUser, type TestApp } from '../helpers.js';
import { codeAt, enableTwoFactor, type TwoFactorUser } from '../support/two-factor-sign-in.js';

const CODE_REQUIRED = 'The code field is required when two-factor sign-in is on.';
const CODE_INVALID = 'The provided two-factor code is invalid.';

type TestUser = Awaited<ReturnType<typeof createUser>> & TwoFactorUser;

describe('POST /api/tokens with two-factor on', () => {
  let t: TestApp;

  before(async () => {
    t = await buildTestApp();
  });
  after(() => t.close());

  async function twoFactorUser(): Promise<TestUser> {
    const user = await createUser(t.app);
    return { ...user, ...(await enableTwoFactor(t.app, user.id)) };
  }

  const issue = (payload: Record<string, unknown>, remoteAddress = '127.0.0.1') =>
    t.app.inject({ method: 'POST', url: '/api/tokens', payload: { device_name: 'cli', ...payload }, remoteAddress });

  const tokenCount = async (userId: number) =>
    (await t.db.kysely.selectFrom('personal_access_tokens').select('id').where('user_id', '=', userId).execute()).length;

  it('answers the right password without a code with 422 and errors.code, issuing nothing', async () => {
    const user = await twoFactorUser();
    const response = await issue({ email: user.email, password: user.plainPassword });
    assert.equal(response.statusCode, 422);
    assert.deepEqual(response.json(), { message: CODE_REQUIRED, errors: { code: [CODE_REQUIRED] } });
    assert.equal(await tokenCount(user.id), 0);
  });

  it('answers an empty code like a missing one (422)', async () => {
    const user = await twoFactorUser();
    const response = await issue({ email: user.email, password: user.plainPassword, code: '', recovery_code: '' });
    assert.equal(response.statusCode, 422);
  });

  it('answers a wrong password with the same 401 as before, whether or not a code is sent', async () => {
    const user = await twoFactorUser();
    for (const extra of [{}, { code: await codeAt(user.secret) }]) {
      const response = await issue({ email: user.email, password: 'not the password', ...extra });
      assert.equal(response.statusCode, 401);
      assert.deepEqual(response.json(), { message: INVALID_CREDENTIALS, errors: {} });
    }
  });

  it('answers a wrong code with 401 and issues nothing', async () => {
    const user = await twoFactorUser();
    const response = await issue({ email: user.email, password: user.plainPassword, code: '12345' });
    assert.equal(response.statusCode, 401);
    assert.deepEqual(response.json(), { message: CODE_INVALID, errors: {} });
    assert.equal(await tokenCount(user.id), 0);
  });

  it('issues a token with the right code, and refuses the same code again with 401', async () => {
    const user = await twoFactorUser();
    const code = await codeAt(user.secret);
    const response = await issue({ email: user.email, password: user.plainPassword, code });
    assert.equal(response.statusCode, 200, response.body);
    const token = (response.json() as { token: string }).token;
    const me = await t.app.inject({ url: '/api/user', headers: { authorization: `Bearer ${token}` } });
    assert.equal(me.statusCode, 200);
    const replay = await issue({ email: user.email, password: user.plainPassword, code });
    assert.equal(replay.statusCode, 401);
    assert.equal(await tokenCount(user.id), 1);
  });

  it('issues a token with a recovery code, once', async () => {
    const user = await twoFactorUser();
    const recovery_code = user.recoveryCodes[2]!;
    const first = await issue({ email: user.email, password: user.plainPassword, recovery_code });
    assert.equal(first.statusCode, 200, first.body);
    const again = await issue({ email: user.email, password: user.plainPassword, recovery_code });
    assert.equal(again.statusCode, 401);
    assert.deepEqual(again.json(), { message: CODE_INVALID, errors: {} });
  });

  it('throttles code attempts at 5 a minute per account + IP: the 6th, even right, is 429 with retry-after', async () => {
    const user = await twoFactorUser();
    for (let i = 0; i < 5; i += 1) {
      assert.equal((await issue({ email: user.email, password: user.plainPassword, code: '12345' }, '203.0.113.20')).statusCode, 401, `attempt ${i + 1}`);
    }
    const limited = await issue({ email: user.email, password: user.plainPassword, code: await codeAt(user.secret) }, '203.0.113.20');
    assert.equal(limited.statusCode, 429);
    assert.match(String(limited.headers['retry-after']), /^\d+$/);
    assert.match((limited.json() as { message: string }).message, /^Too many attempts\. Please try again in \d+ seconds\.$/);
    assert.equal(await tokenCount(user.id), 0);
    const elsewhere = await issue({ email: user.email, password: user.plainPassword, code: await codeAt(user.secret) }, '198.51.100.20');
    assert.equal(elsewhere.statusCode, 200, 'another address has its own window');
  });

  it('refuses a code longer than the schema allows with 422', async () => {
    const user = await twoFactorUser();
    const response = await issue({ email: user.email, password: user.plainPassword, code: '1'.repeat(65) });
    assert.equal(response.statusCode, 422);
    assert.ok((response.json() as { errors: Record<string, string[]> }).errors.code);
  });

  it('issues a token to an account without two-factor as before, a code being ignored', async () => {
    const user = await createUser(t.app);
    assert.equal((await issue({ email: user.email, password: user.plainPassword })).statusCode, 200);
    assert.equal((await issue({ email: user.email, password: user.plainPassword, code: '123456' })).statusCode, 200);
  });

  it('describes code and recovery_code, and the 422 and 401 cases, in the OpenAPI document', async () => {
    const response = await t.app.inject({ url: '/docs/json' });
    assert.equal(response.statusCode, 200);
    type Op = { description?: string; requestBody: { content: Record<string, { schema: { properties: Record<string, { type: string; maxLength?: number; description?: string }>; required?: string[] } }> } };
    const op = (response.json() as { paths: Record<string, Record<string, Op>> }).paths['/api/tokens']?.post;
    assert.ok(op);
    const schema = op.requestBody.content['application/json']!.schema;
    assert.equal(schema.properties.code?.type, 'string');
    assert.equal(schema.properties.recovery_code?.type, 'string');
    assert.ok(schema.properties.code?.maxLength);
    assert.ok(!(schema.required ?? []).includes('code') && !(schema.required ?? []).includes('recovery_code'), 'both optional');
    assert.match(op.description ?? '', /two-factor/);
    assert.match(op.description ?? '', /422 with `errors\.code`/);
    assert.match(op.description ?? '', /401/);
    assert.match(op.description ?? '', /recovery_code/);
  });
});
