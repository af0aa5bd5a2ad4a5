// GET /api/user, PUT /api/user, PUT /api/user/password.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { bearer, buildTestApp, createUser, issueToken, type TestApp } from '../helpers.js';
import { UNAUTHENTICATED } from './support.js';

type User = Awaited<ReturnType<typeof createUser>>;
const USER_KEYS = ['created_at', 'email', 'email_verified_at', 'id', 'name', 'updated_at'];

describe('GET /api/user', () => {
  let t: TestApp;
  before(async () => {
    t = await buildTestApp();
  });
  after(() => t.close());

  it('answers exactly {id, name, email, email_verified_at, created_at, updated_at}, unwrapped', async () => {
    const user = await createUser(t.app, { name: 'Grace Hopper', admin: true });
    await t.db.kysely.updateTable('users').set({ remember_token: 'remember-me-token-value' }).where('id', '=', user.id).execute();
    const token = await issueToken(t.app, user.email, user.plainPassword);
    const response = await t.app.inject({ url: '/api/user', headers: bearer(token) });
    assert.equal(response.statusCode, 200);
    const body = response.json() as Record<string, unknown>;
    assert.deepEqual(Object.keys(body).sort(), USER_KEYS);
    const row = await t.db.kysely.selectFrom('users').selectAll().where('id', '=', user.id).executeTakeFirstOrThrow();
    assert.deepEqual(body, {
      id: row.id,
      name: 'Grace Hopper',
      email: row.email,
      email_verified_at: row.email_verified_at,
      created_at: row.created_at,
      updated_at: row.updated_at,
    });
    for (const secret of [row.password ?? 'no hash', 'remember-me-token-value', user.plainPassword, token]) {
      assert.ok(!response.body.includes(secret));
    }
    assert.doesNotMatch(response.body, /password|remember|is_admin|argon2/);
  });

  // The route keeps its serialised answer per user object (src/http/api/user.ts): the same
  // bytes while nothing changed, the current user after any change, and never another's.
  it('answers the current user after every change, and the same bytes while nothing changed', async () => {
    const user = await createUser(t.app, { name: 'Kept Body' });
    const other = await createUser(t.app, { name: 'Someone Else' });
    const token = await issueToken(t.app, user.email, user.plainPassword);
    const otherToken = await issueToken(t.app, other.email, other.plainPassword);
    const read = async (bearerToken = token) => {
      const response = await t.app.inject({ url: '/api/user', headers: bearer(bearerToken) });
      assert.equal(response.statusCode, 200);
      assert.equal(response.headers['content-type'], 'application/json; charset=utf-8');
      return response.body;
    };
    const first = await read();
    assert.equal(await read(), first);
    assert.equal((JSON.parse(await read(otherToken)) as { name: string }).name, 'Someone Else');
    assert.equal((JSON.parse(await read()) as { name: string }).name, 'Kept Body');

    const renamed = await t.app.inject({ method: 'PUT', url: '/api/user', headers: bearer(token), payload: { name: 'Renamed' } });
    assert.equal(renamed.statusCode, 200);
    assert.equal((JSON.parse(await read()) as { name: string }).name, 'Renamed');

    // A change made around the API (the CLI, another instance, the panel).
    await t.db.kysely.updateTable('users').set({ name: 'Changed <"in the database">' }).where('id', '=', user.id).execute();
    const changed = await read();
    assert.equal((JSON.parse(changed) as { name: string }).name, 'Changed <"in the database">');
    assert.equal(await read(), changed);
  });

  it('answers email_verified_at null for an unverified user, and ISO dates otherwise', async () => {
    const user = await createUser(t.app, { verified: false });
    const token = await issueToken(t.app, user.email, user.plainPassword);
    const body = (await t.app.inject({ url: '/api/user', headers: bearer(token) })).json();
    assert.equal(body.email_verified_at, null);
    assert.match(body.created_at, /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?Z$/);
  });
});

describe('PUT /api/user', () => {
  let t: TestApp;
  before(async () => {
    t = await buildTestApp();
  });
  after(() => t.close());

  async function signedIn(fields: Parameters<typeof createUser>[1] = {}): Promise<{ user: User; token: string }> {
    const user = await createUser(t.app, fields);
    return { user, token: await issueToken(t.app, user.email, user.plainPassword) };
  }
  const put = (token: string, payload: object) => t.app.inject({ method: 'PUT', url: '/api/user', payload, headers: bearer(token) });
  const row = (id: number) => t.db.kysely.selectFrom('users').selectAll().where('id', '=', id).executeTakeFirstOrThrow();

  it('changes the name and answers 200 with the updated user', async () => {
    const { user, token } = await signedIn({ name: 'Old Name' });
    const response = await put(token, { name: 'New Name' });
    assert.equal(response.statusCode, 200);
    const body = response.json();
    assert.deepEqual(Object.keys(body).sort(), USER_KEYS);
    assert.equal(body.name, 'New Name');
    assert.equal(body.email, user.email);
    assert.notEqual(body.email_verified_at, null, 'a name change keeps the verification');
    assert.equal((await row(user.id)).name, 'New Name');
    assert.equal((await t.app.inject({ url: '/api/user', headers: bearer(token) })).json().name, 'New Name');
  });

  // The whole pending flow (links, notice, SPA) is in account-rules.test.ts.
  it('never changes the email at once: 202, the address and its verification unchanged, the change pending', async () => {
    const { user, token } = await signedIn();
    const response = await put(token, { email: `changed-${user.id}@example.com`, current_password: user.plainPassword });
    assert.equal(response.statusCode, 202);
    assert.deepEqual(Object.keys(response.json()).sort(), [...USER_KEYS, 'pending_email'].sort());
    assert.equal(response.json().email, user.email);
    assert.equal(response.json().pending_email, `changed-${user.id}@example.com`);
    const stored = await row(user.id);
    assert.equal(stored.email, user.email);
    assert.notEqual(stored.email_verified_at, null);
  });

  it('keeps email_verified_at when the same email is sent again', async () => {
    const { user, token } = await signedIn();
    const response = await put(token, { name: 'Same Email', email: user.email });
    assert.equal(response.statusCode, 200);
    assert.notEqual(response.json().email_verified_at, null);
  });

  it('ignores unknown fields such as is_admin, id, password, email_verified_at and remember_token', async () => {
    const { user, token } = await signedIn({ verified: false });
    const before = await row(user.id);
    const response = await put(token, {
      name: 'Still Me',
      is_admin: 1,
      id: 9999,
      password: 'hijacked password',
      email_verified_at: '2020-01-01T00:00:00.000Z',
      remember_token: 'forged',
      created_at: '2000-01-01T00:00:00.000Z',
    });
    assert.equal(response.statusCode, 200);
    assert.equal(response.json().id, user.id);
    assert.equal(response.json().email_verified_at, null);
    const after = await row(user.id);
    assert.equal(after.name, 'Still Me');
    assert.equal(after.is_admin, 0);
    assert.equal(after.password, before.password);
    assert.equal(after.email_verified_at, null);
    assert.equal(after.remember_token, null);
    assert.equal(after.created_at, before.created_at);
    assert.equal(await t.db.kysely.selectFrom('users').select('id').where('id', '=', 9999).executeTakeFirst(), undefined);
    const login = await t.app.inject({ method: 'POST', url: '/api/tokens', payload: { email: user.email, password: 'hijacked password', device_name: 'x' } });
    assert.equal(login.statusCode, 401);
  });

  it('answers 200 and changes nothing for an empty body', async () => {
    const { user, token } = await signedIn({ name: 'Unchanged' });
    const response = await put(token, {});
    assert.equal(response.statusCode, 200);
    assert.equal(response.json().name, 'Unchanged');
    assert.equal(response.json().email, user.email);
  });

  it('accepts a name of 255 characters', async () => {
    const { token } = await signedIn();
    const response = await put(token, { name: 'n'.repeat(255) });
    assert.equal(response.statusCode, 200);
    assert.equal(response.json().name, 'n'.repeat(255));
  });

  it('refuses an email another user has, whatever its case, with 422 "The email has already been taken."', async () => {
    const taken = await createUser(t.app, { email: `Taken-${Date.now()}@Example.com` });
    const { user, token } = await signedIn();
    for (const email of [taken.email, taken.email.toLowerCase(), taken.email.toUpperCase()]) {
      const response = await put(token, { email, current_password: user.plainPassword });
      assert.equal(response.statusCode, 422, email);
      assert.deepEqual(response.json(), { message: 'The email has already been taken.', errors: { email: ['The email has already been taken.'] } });
    }
    assert.equal((await row(user.id)).email, user.email);
  });

  const invalid: Array<[string, object, string, string]> = [
    ['an empty name', { name: '' }, 'name', 'The name field is required.'],
    ['a name of 256 characters', { name: 'n'.repeat(256) }, 'name', 'The name field must not be greater than 255 characters.'],
    ['a name that is a number', { name: 42 }, 'name', 'The name field must be a string.'],
    ['a name that is null', { name: null }, 'name', 'The name field must be a string.'],
    ['an empty email', { email: '' }, 'email', 'The email field is required.'],
    ['a malformed email', { email: 'not an email' }, 'email', 'The email field must be a valid email address.'],
    ['an email that is an array', { email: ['a@example.com'] }, 'email', 'The email field must be a string.'],
    ['an email over 255 characters', { email: `${'a'.repeat(250)}@example.com` }, 'email', 'The email field must not be greater than 255 characters.'],
  ];
  for (const [name, payload, field, message] of invalid) {
    it(`answers 422 for ${name}, and changes nothing`, async () => {
      const { user, token } = await signedIn({ name: 'Before' });
      const response = await put(token, payload);
      assert.equal(response.statusCode, 422);
      assert.deepEqual(response.json(), { message, errors: { [field]: [message] } });
      const stored = await row(user.id);
      assert.equal(stored.name, 'Before');
      assert.equal(stored.email, user.email);
    });
  }
});

describe('PUT /api/user/password', () => {
  let t: TestApp;
  before(async () => {
    t = await buildTestApp();
  });
  after(() => t.close());

  const change = (token: string, payload: object) => t.app.inject({ method: 'PUT', url: '/api/user/password', payload, headers: bearer(token) });
  const login = (email: string, password: string) => t.app.inject({ method: 'POST', url: '/api/tokens', payload: { email, password, device_name: 'x' } });
  const storedHash = async (id: number) => (await t.db.kysely.selectFrom('users').select('password').where('id', '=', id).executeTakeFirstOrThrow()).password ?? '';

  it('answers 204, keeps the calling token, revokes the other tokens, and the new password is the only one that works', async () => {
    const user = await createUser(t.app, { password: 'old password 1' });
    const caller = await issueToken(t.app, user.email, 'old password 1', 'caller');
    const other = await issueToken(t.app, user.email, 'old password 1', 'other');
    const stranger = await createUser(t.app);
    const strangerToken = await issueToken(t.app, stranger.email, stranger.plainPassword);
    await t.db.kysely.updateTable('users').set({ remember_token: 'remembered' }).where('id', '=', user.id).execute();

    const response = await change(caller, { current_password: 'old password 1', password: 'new password 2', password_confirmation: 'new password 2' });
    assert.equal(response.statusCode, 204);
    assert.equal(response.body, '');

    assert.equal((await t.app.inject({ url: '/api/user', headers: bearer(caller) })).statusCode, 200);
    assert.equal((await t.app.inject({ url: '/api/user', headers: bearer(other) })).body, UNAUTHENTICATED);
    assert.equal((await t.app.inject({ url: '/api/user', headers: bearer(strangerToken) })).statusCode, 200);
    assert.equal((await login(user.email, 'new password 2')).statusCode, 200);
    assert.equal((await login(user.email, 'old password 1')).statusCode, 401);
    assert.match(await storedHash(user.id), /^\$argon2id\$/);
    const row = await t.db.kysely.selectFrom('users').select('remember_token').where('id', '=', user.id).executeTakeFirstOrThrow();
    assert.equal(row.remember_token, null, 'a new password forgets "remember me"');
  });

  it('answers 422 on current_password "The password is incorrect." for a wrong current password, and changes nothing', async () => {
    const user = await createUser(t.app, { password: 'old password 1' });
    const caller = await issueToken(t.app, user.email, 'old password 1', 'caller');
    const other = await issueToken(t.app, user.email, 'old password 1', 'other');
    const before = await storedHash(user.id);
    const response = await change(caller, { current_password: 'not my password', password: 'new password 2', password_confirmation: 'new password 2' });
    assert.equal(response.statusCode, 422);
    assert.deepEqual(response.json(), { message: 'The password is incorrect.', errors: { current_password: ['The password is incorrect.'] } });
    assert.equal(await storedHash(user.id), before);
    assert.equal((await t.app.inject({ url: '/api/user', headers: bearer(other) })).statusCode, 200, 'no token is revoked on failure');
  });

  const REQUIRED = (field: string) => `The ${field} field is required.`;
  const SHORT = 'The password field must be at least 8 characters.';
  const CONFIRM = 'The password field confirmation does not match.';
  const invalid: Array<[string, object, Record<string, string[]>]> = [
    ['an empty body', {}, { current_password: [REQUIRED('current password')], password: [REQUIRED('password')] }],
    ['a missing current password', { password: 'new password 2', password_confirmation: 'new password 2' }, { current_password: [REQUIRED('current password')] }],
    ['an empty current password', { current_password: '', password: 'new password 2', password_confirmation: 'new password 2' }, { current_password: [REQUIRED('current password')] }],
    ['a missing new password', { current_password: 'old password 1' }, { password: [REQUIRED('password')] }],
    ['a new password of 7 characters', { current_password: 'old password 1', password: '1234567', password_confirmation: '1234567' }, { password: [SHORT] }],
    ['a missing confirmation', { current_password: 'old password 1', password: 'new password 2' }, { password: [CONFIRM] }],
    ['a confirmation that differs', { current_password: 'old password 1', password: 'new password 2', password_confirmation: 'new password 3' }, { password: [CONFIRM] }],
    ['a short, unconfirmed password', { current_password: 'old password 1', password: 'short', password_confirmation: 'other' }, { password: [SHORT, CONFIRM] }],
    ['a password that is not a string', { current_password: 'old password 1', password: 12345678, password_confirmation: 12345678 }, { password: ['The password field must be a string.'], password_confirmation: ['The password confirmation field must be a string.'] }],
  ];
  for (const [name, payload, errors] of invalid) {
    it(`answers 422 for ${name}, and changes nothing`, async () => {
      const user = await createUser(t.app, { password: 'old password 1' });
      const caller = await issueToken(t.app, user.email, 'old password 1');
      const before = await storedHash(user.id);
      const response = await change(caller, payload);
      assert.equal(response.statusCode, 422);
      assert.deepEqual(response.json(), { message: Object.values(errors)[0]?.[0], errors });
      assert.equal(await storedHash(user.id), before);
    });
  }

  it('accepts a new password of exactly 8 characters', async () => {
    const user = await createUser(t.app, { password: 'old password 1' });
    const caller = await issueToken(t.app, user.email, 'old password 1');
    const response = await change(caller, { current_password: 'old password 1', password: 'Xq7#pLm2', password_confirmation: 'Xq7#pLm2' });
    assert.equal(response.statusCode, 204);
    assert.equal((await login(user.email, 'Xq7#pLm2')).statusCode, 200);
  });
});
