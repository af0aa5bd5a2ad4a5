// POST /api/tokens: issuing personal access tokens in Sanctum 4's format.
import assert from 'node:assert/strict';
import { crc32 } from 'node:zlib';
import { after, before, describe, it } from 'node:test';
import bcrypt from 'bcryptjs';
import { buildTestApp, createUser, type TestApp } from '../helpers.js';
import { insertLaravelToken, sanctumSecret, sha256, splitToken, tokenRow } from './support.js';

const INCORRECT = '{"message":"The provided credentials are incorrect.","errors":{}}';
const TOKEN_SHAPE = /^(\d+)\|([A-Za-z0-9]{40})([0-9a-f]{8})$/;

describe('POST /api/tokens', () => {
  let t: TestApp;
  let user: Awaited<ReturnType<typeof createUser>>;

  before(async () => {
    t = await buildTestApp();
    user = await createUser(t.app, { name: 'Ada Lovelace', email: 'Ada.Lovelace@Example.com', password: 'analytical engine' });
  });
  after(() => t.close());

  const issue = (payload: unknown) => t.app.inject({ method: 'POST', url: '/api/tokens', payload: payload as object, headers: { accept: 'application/json' } });

  it('answers 200 with exactly {token, user: {id, name, email}}', async () => {
    const response = await issue({ email: user.email, password: 'analytical engine', device_name: 'iPhone 15' });
    assert.equal(response.statusCode, 200);
    assert.match(String(response.headers['content-type']), /^application\/json/);
    const body = response.json() as { token: string; user: Record<string, unknown> };
    assert.deepEqual(Object.keys(body).sort(), ['token', 'user']);
    assert.deepEqual(body.user, { id: user.id, name: 'Ada Lovelace', email: 'Ada.Lovelace@Example.com' });
  });

  it('issues `<id>|<40 alphanumerics><crc32 of them>` where id is the row id', async () => {
    const response = await issue({ email: user.email, password: 'analytical engine', device_name: 'format' });
    const token = (response.json() as { token: string }).token;
    const match = TOKEN_SHAPE.exec(token);
    assert.ok(match, token);
    const [, id, entropy, checksum] = match;
    assert.equal(checksum, crc32(entropy ?? '').toString(16).padStart(8, '0'));
    const row = await tokenRow(t.db, Number(id));
    assert.equal(row?.name, 'format');
    assert.equal(row?.user_id, user.id);
  });

  it('stores only the SHA-256 of the secret, nowhere the plaintext', async () => {
    const response = await issue({ email: user.email, password: 'analytical engine', device_name: 'hash' });
    const token = (response.json() as { token: string }).token;
    const { id, secret } = splitToken(token);
    const row = await tokenRow(t.db, id);
    assert.ok(row);
    assert.equal(row.token, sha256(secret));
    const stored = JSON.stringify(row);
    assert.ok(!stored.includes(secret));
    assert.ok(!stored.includes(secret.slice(0, 40)));
  });

  it('stores the abilities ["*"] and ignores an abilities field in the request', async () => {
    const response = await issue({ email: user.email, password: 'analytical engine', device_name: 'abilities', abilities: ['posts:read'] });
    assert.equal(response.statusCode, 200);
    const row = await tokenRow(t.db, splitToken((response.json() as { token: string }).token).id);
    assert.deepEqual(JSON.parse(row?.abilities ?? 'null'), ['*']);
  });

  it('sets no expiry when SANCTUM_EXPIRATION is null', async () => {
    const response = await issue({ email: user.email, password: 'analytical engine', device_name: 'forever' });
    const row = await tokenRow(t.db, splitToken((response.json() as { token: string }).token).id);
    assert.equal(row?.expires_at, null);
    assert.equal(row?.last_used_at, null);
  });

  it('issues a new, different token on every call, each of them valid', async () => {
    const tokens = [];
    for (let i = 0; i < 2; i += 1) {
      tokens.push((await issue({ email: user.email, password: 'analytical engine', device_name: 'same' })).json().token as string);
    }
    assert.notEqual(tokens[0], tokens[1]);
    for (const token of tokens) {
      const me = await t.app.inject({ url: '/api/user', headers: { authorization: `Bearer ${token}` } });
      assert.equal(me.statusCode, 200);
    }
  });

  it('finds the account whatever the case of the email', async () => {
    const response = await issue({ email: 'ada.lovelace@EXAMPLE.COM', password: 'analytical engine', device_name: 'case' });
    assert.equal(response.statusCode, 200);
    assert.equal(response.json().user.id, user.id);
    assert.equal(response.json().user.email, 'Ada.Lovelace@Example.com');
  });

  it('answers a byte-identical 401 for an unknown email and for a wrong password', async () => {
    const unknown = await issue({ email: 'nobody@example.com', password: 'analytical engine', device_name: 'd' });
    const wrong = await issue({ email: user.email, password: 'analytical enginE', device_name: 'd' });
    assert.equal(unknown.statusCode, 401);
    assert.equal(wrong.statusCode, 401);
    assert.equal(unknown.body, INCORRECT);
    assert.equal(wrong.body, INCORRECT);
    for (const header of ['content-type', 'content-length', 'www-authenticate', 'set-cookie']) {
      assert.equal(unknown.headers[header], wrong.headers[header], header);
    }
  });

  it('refuses the password of another account', async () => {
    const other = await createUser(t.app, { password: 'other password' });
    const response = await issue({ email: user.email, password: other.plainPassword, device_name: 'd' });
    assert.equal(response.body, INCORRECT);
  });

  it('applies no minimum length to the password when logging in', async () => {
    const short = await createUser(t.app, { password: 'a' });
    const response = await issue({ email: short.email, password: 'a', device_name: 'd' });
    assert.equal(response.statusCode, 200);
  });

  const REQUIRED = (field: string) => `The ${field} field is required.`;
  const EMAIL = 'The email field must be a valid email address.';
  const invalid: Array<[string, unknown, Record<string, string[]>]> = [
    ['an empty body', {}, { email: [REQUIRED('email')], password: [REQUIRED('password')], device_name: [REQUIRED('device name')] }],
    ['a missing email', { password: 'x', device_name: 'd' }, { email: [REQUIRED('email')] }],
    ['an empty email', { email: '', password: 'x', device_name: 'd' }, { email: [REQUIRED('email')] }],
    ['a malformed email', { email: 'not-an-email', password: 'x', device_name: 'd' }, { email: [EMAIL] }],
    ['an email without a domain', { email: 'ada@', password: 'x', device_name: 'd' }, { email: [EMAIL] }],
    ['an email that is a number', { email: 42, password: 'x', device_name: 'd' }, { email: ['The email field must be a string.'] }],
    ['a missing password', { email: 'a@example.com', device_name: 'd' }, { password: [REQUIRED('password')] }],
    ['an empty password', { email: 'a@example.com', password: '', device_name: 'd' }, { password: [REQUIRED('password')] }],
    ['a password that is not a string', { email: 'a@example.com', password: 12345678, device_name: 'd' }, { password: ['The password field must be a string.'] }],
    ['a missing device name', { email: 'a@example.com', password: 'x' }, { device_name: [REQUIRED('device name')] }],
    ['an empty device name', { email: 'a@example.com', password: 'x', device_name: '' }, { device_name: [REQUIRED('device name')] }],
    ['a device name over 255 characters', { email: 'a@example.com', password: 'x', device_name: 'd'.repeat(256) }, { device_name: ['The device name field must not be greater than 255 characters.'] }],
    [
      'a malformed email and missing fields, in the order of the rules',
      { email: 'bad' },
      { email: [EMAIL], password: [REQUIRED('password')], device_name: [REQUIRED('device name')] },
    ],
  ];
  for (const [name, payload, errors] of invalid) {
    it(`answers 422 for ${name}, message = the first error`, async () => {
      const response = await issue(payload);
      assert.equal(response.statusCode, 422);
      const first = Object.values(errors)[0]?.[0];
      assert.deepEqual(response.json(), { message: first, errors });
      assert.equal(Object.keys(response.json().errors)[0], Object.keys(errors)[0]);
    });
  }

  it('answers 422 for a JSON body that is not an object', async () => {
    const response = await t.app.inject({ method: 'POST', url: '/api/tokens', payload: '["a@example.com"]', headers: { 'content-type': 'application/json' } });
    assert.equal(response.statusCode, 422);
    assert.deepEqual(response.json(), { message: 'The request body must be a JSON object.', errors: {} });
  });

  it('accepts a device name of exactly 255 characters', async () => {
    const response = await issue({ email: user.email, password: 'analytical engine', device_name: 'd'.repeat(255) });
    assert.equal(response.statusCode, 200);
  });
});

describe('passwords imported from Laravel (bcrypt $2y$)', () => {
  let t: TestApp;
  before(async () => {
    t = await buildTestApp();
  });
  after(() => t.close());

  async function laravelUser(email: string, password: string): Promise<number> {
    const now = new Date().toISOString();
    const row = await t.db.kysely
      .insertInto('users')
      .values({
        name: 'Imported',
        email,
        password: bcrypt.hashSync(password, 4).replace(/^\$2b\$/, '$2y$'),
        email_verified_at: now,
        is_admin: 0,
        remember_token: null,
        locale: null,
        created_at: now,
        updated_at: now,
      })
      .returning('id')
      .executeTakeFirstOrThrow();
    return row.id;
  }
  const storedHash = async (id: number) =>
    (await t.db.kysely.selectFrom('users').select('password').where('id', '=', id).executeTakeFirstOrThrow()).password ?? '';
  const login = (email: string, password: string) =>
    t.app.inject({ method: 'POST', url: '/api/tokens', payload: { email, password, device_name: 'import' } });

  it('verify, and are rehashed to argon2id at the first successful login', async () => {
    const id = await laravelUser('imported@example.com', 'laravel-secret');
    assert.match(await storedHash(id), /^\$2y\$/);
    const first = await login('imported@example.com', 'laravel-secret');
    assert.equal(first.statusCode, 200);
    const upgraded = await storedHash(id);
    // At the app's own cost (ARGON_MEMORY, ARGON_TIME: low in test apps, OWASP's elsewhere).
    const { memoryKib, iterations } = t.config.passwordHashing;
    assert.ok(upgraded.startsWith(`$argon2id$v=19$m=${memoryKib},t=${iterations},p=1$`), upgraded);
    const second = await login('imported@example.com', 'laravel-secret');
    assert.equal(second.statusCode, 200);
    assert.equal(await storedHash(id), upgraded, 'a current hash is not rewritten');
  });

  it('refuse a wrong password and are then left as they are', async () => {
    const id = await laravelUser('imported2@example.com', 'laravel-secret');
    const before = await storedHash(id);
    const response = await login('imported2@example.com', 'laravel-Secret');
    assert.equal(response.statusCode, 401);
    assert.equal(response.body, INCORRECT);
    assert.equal(await storedHash(id), before);
  });

  it('accept a token that a Laravel app issued (SHA-256 of a Sanctum 4 secret)', async () => {
    const id = await laravelUser('imported3@example.com', 'laravel-secret');
    const token = await insertLaravelToken(t.db, id);
    const response = await t.app.inject({ url: '/api/user', headers: { authorization: `Bearer ${token}`, accept: 'application/json' } });
    assert.equal(response.statusCode, 200);
    assert.equal(response.json().id, id);
  });
});

describe('POST /api/tokens with SANCTUM_TOKEN_PREFIX', () => {
  let t: TestApp;
  let user: Awaited<ReturnType<typeof createUser>>;
  before(async () => {
    t = await buildTestApp({ SANCTUM_TOKEN_PREFIX: 'tessera_' });
    user = await createUser(t.app);
  });
  after(() => t.close());

  it('puts the prefix before the random part, and stores the SHA-256 of prefix + random + crc', async () => {
    const response = await t.app.inject({ method: 'POST', url: '/api/tokens', payload: { email: user.email, password: user.plainPassword, device_name: 'p' } });
    const token = (response.json() as { token: string }).token;
    const match = /^(\d+)\|tessera_([A-Za-z0-9]{40})([0-9a-f]{8})$/.exec(token);
    assert.ok(match, token);
    assert.equal(match[3], crc32(match[2] ?? '').toString(16).padStart(8, '0'));
    const { id, secret } = splitToken(token);
    assert.equal((await tokenRow(t.db, id))?.token, sha256(secret));
    const ok = await t.app.inject({ url: '/api/user', headers: { authorization: `Bearer ${token}` } });
    assert.equal(ok.statusCode, 200);
  });

  it('accepts a prefixed token issued by a Laravel app with the same prefix', async () => {
    const token = await insertLaravelToken(t.db, user.id, sanctumSecret('tessera_'));
    const ok = await t.app.inject({ url: '/api/user', headers: { authorization: `Bearer ${token}` } });
    assert.equal(ok.statusCode, 200);
  });

  it('refuses a token whose secret lacks the prefix, even when its hash is stored', async () => {
    const token = await insertLaravelToken(t.db, user.id, sanctumSecret(''));
    const response = await t.app.inject({ url: '/api/user', headers: { authorization: `Bearer ${token}` } });
    assert.equal(response.statusCode, 401);
  });
});
