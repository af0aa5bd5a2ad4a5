// Bearer-token validation on every "Auth: Yes" route, revocation, expiry, last_used_at and abilities.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { buildTestApp, createUser, issueToken, type TestApp } from '../helpers.js';
import { UNAUTHENTICATED, UNAUTHORIZED, minutesAgo, sanctumSecret, setTokenTimes, sha256, splitToken, tokenRow } from './support.js';

type User = Awaited<ReturnType<typeof createUser>>;

const me = (t: TestApp, headers: Record<string, string> = {}, url = '/api/user') =>
  t.app.inject({ method: 'GET', url, headers: { accept: 'application/json', ...headers } });
const withToken = (token: string) => ({ authorization: `Bearer ${token}` });

describe('bearer token validation', () => {
  let t: TestApp;
  let alice: User;
  let bob: User;
  let aliceToken: string;
  let bobToken: string;

  before(async () => {
    t = await buildTestApp();
    alice = await createUser(t.app, { name: 'Alice' });
    bob = await createUser(t.app, { name: 'Bob' });
    aliceToken = await issueToken(t.app, alice.email, alice.plainPassword);
    bobToken = await issueToken(t.app, bob.email, bob.plainPassword);
  });
  after(() => t.close());

  it('accepts a valid token and answers for its user', async () => {
    const response = await me(t, withToken(aliceToken));
    assert.equal(response.statusCode, 200);
    assert.equal(response.json().id, alice.id);
  });

  const flipLast = (token: string) => token.slice(0, -1) + (token.endsWith('0') ? '1' : '0');
  const cases: Array<[string, () => Record<string, string>]> = [
    ['no Authorization header', () => ({})],
    ['an empty Authorization header', () => ({ authorization: '' })],
    ['"Bearer" with no token', () => ({ authorization: 'Bearer' })],
    ['"Bearer " with an empty token', () => ({ authorization: 'Bearer ' })],
    ['a token that is not in the id|secret form', () => ({ authorization: 'Bearer not-a-token' })],
    ['the secret without its id', () => withToken(splitToken(aliceToken).secret)],
    ['a wrong checksum', () => withToken(flipLast(aliceToken))],
    ['an unknown id with a well-formed secret', () => withToken(`999999|${splitToken(aliceToken).secret}`)],
    ['the right id with another well-formed secret', () => withToken(`${splitToken(aliceToken).id}|${sanctumSecret()}`)],
    ["another user's id with this user's secret", () => withToken(`${splitToken(bobToken).id}|${splitToken(aliceToken).secret}`)],
    ['the SHA-256 digest instead of the secret', () => withToken(`${splitToken(aliceToken).id}|${sha256(splitToken(aliceToken).secret)}`)],
    ['the lower-case scheme "bearer"', () => ({ authorization: `bearer ${aliceToken}` })],
    ['another scheme', () => ({ authorization: `Token ${aliceToken}` })],
    ['Basic credentials', () => ({ authorization: `Basic ${Buffer.from(`${alice.email}:${alice.plainPassword}`).toString('base64')}` })],
    ['two spaces after the scheme', () => ({ authorization: `Bearer  ${aliceToken}` })],
    ['a tab after the scheme', () => ({ authorization: `Bearer\t${aliceToken}` })],
    ['two tokens in one header', () => ({ authorization: `Bearer ${aliceToken}, Bearer ${bobToken}` })],
    ['a token followed by other text', () => ({ authorization: `Bearer ${aliceToken} extra` })],
    ['the token in a cookie', () => ({ cookie: `token=${aliceToken}; access_token=${aliceToken}; api_token=${aliceToken}` })],
    ['the token in an X-Api-Token header', () => ({ 'x-api-token': aliceToken, 'x-auth-token': aliceToken })],
  ];
  for (const [name, headers] of cases) {
    it(`refuses ${name} with 401 {"message":"Unauthenticated.","errors":{}}`, async () => {
      const response = await me(t, headers());
      assert.equal(response.statusCode, 401);
      assert.equal(response.body, UNAUTHENTICATED);
      assert.match(String(response.headers['content-type']), /^application\/json/);
    });
  }

  for (const param of ['token', 'api_token', 'access_token']) {
    it(`refuses the token in the query parameter ${param} with 401`, async () => {
      const response = await me(t, {}, `/api/user?${param}=${encodeURIComponent(aliceToken)}`);
      assert.equal(response.statusCode, 401);
      assert.equal(response.body, UNAUTHENTICATED);
    });
  }

  it('refuses a token with a bad checksum even when a row holds its hash (no lookup for malformed tokens)', async () => {
    const good = sanctumSecret();
    const bad = good.slice(0, -1) + (good.endsWith('0') ? '1' : '0');
    const now = new Date().toISOString();
    const row = await t.db.kysely
      .insertInto('personal_access_tokens')
      .values({ user_id: alice.id, name: 'crafted', token: sha256(bad), abilities: '["*"]', last_used_at: null, expires_at: null, created_at: now, updated_at: now })
      .returning('id')
      .executeTakeFirstOrThrow();
    assert.equal((await me(t, withToken(`${row.id}|${bad}`))).body, UNAUTHENTICATED);
  });

  const protectedRoutes: Array<[string, string, object | undefined]> = [
    ['GET', '/api/user', undefined],
    ['PUT', '/api/user', { name: 'Mallory' }],
    ['PUT', '/api/user/password', { current_password: 'x', password: 'new password', password_confirmation: 'new password' }],
    ['DELETE', '/api/tokens/current', undefined],
    ['DELETE', '/api/tokens', undefined],
    ['POST', '/api/posts', { title: 'Hello' }],
    ['PUT', '/api/posts/some-post', { title: 'Hello' }],
    ['DELETE', '/api/posts/some-post', undefined],
  ];
  for (const [method, url, payload] of protectedRoutes) {
    for (const [label, headers] of [
      ['no token', {}],
      ['an unknown token', withToken(`424242|${sanctumSecret()}`)],
    ] as const) {
      it(`guards ${method} ${url}: ${label} → 401 and nothing changes`, async () => {
        const response = await t.app.inject({ method: method as 'GET', url, payload, headers: { accept: 'application/json', ...headers } });
        assert.equal(response.statusCode, 401);
        assert.equal(response.body, UNAUTHENTICATED);
      });
    }
  }

  it('left the accounts and tokens untouched after the refused calls', async () => {
    assert.equal((await me(t, withToken(aliceToken))).json().name, 'Alice');
    assert.equal((await me(t, withToken(bobToken))).statusCode, 200);
  });

  it('refuses a bad token on GET /api/posts (optional token) rather than answering anonymously', async () => {
    assert.equal((await t.app.inject({ url: '/api/posts' })).statusCode, 200);
    const response = await t.app.inject({ url: '/api/posts', headers: withToken(`424242|${sanctumSecret()}`) });
    assert.equal(response.statusCode, 401);
    assert.equal(response.body, UNAUTHENTICATED);
  });
});

describe('revoking tokens', () => {
  let t: TestApp;
  before(async () => {
    t = await buildTestApp();
  });
  after(() => t.close());

  it('DELETE /api/tokens/current → 204; that token stops working at once, the other of the user keeps working', async () => {
    const user = await createUser(t.app);
    const phone = await issueToken(t.app, user.email, user.plainPassword, 'phone');
    const laptop = await issueToken(t.app, user.email, user.plainPassword, 'laptop');
    const response = await t.app.inject({ method: 'DELETE', url: '/api/tokens/current', headers: withToken(phone) });
    assert.equal(response.statusCode, 204);
    assert.equal(response.body, '');
    assert.equal((await me(t, withToken(phone))).body, UNAUTHENTICATED);
    assert.equal(await tokenRow(t.db, splitToken(phone).id), undefined);
    assert.equal((await me(t, withToken(laptop))).statusCode, 200);
    const again = await t.app.inject({ method: 'DELETE', url: '/api/tokens/current', headers: withToken(phone) });
    assert.equal(again.statusCode, 401);
  });

  it('DELETE /api/tokens → 204; every token of the user stops working, other users keep theirs', async () => {
    const user = await createUser(t.app);
    const other = await createUser(t.app);
    const tokens = [
      await issueToken(t.app, user.email, user.plainPassword, 'one'),
      await issueToken(t.app, user.email, user.plainPassword, 'two'),
      await issueToken(t.app, user.email, user.plainPassword, 'three'),
    ];
    const othersToken = await issueToken(t.app, other.email, other.plainPassword);
    const response = await t.app.inject({ method: 'DELETE', url: '/api/tokens', headers: withToken(tokens[1] ?? '') });
    assert.equal(response.statusCode, 204);
    assert.equal(response.body, '');
    for (const token of tokens) assert.equal((await me(t, withToken(token))).body, UNAUTHENTICATED);
    const left = await t.db.kysely.selectFrom('personal_access_tokens').select('id').where('user_id', '=', user.id).execute();
    assert.deepEqual(left, []);
    assert.equal((await me(t, withToken(othersToken))).statusCode, 200);
  });

  it('revokeByName (application code) removes only that user’s tokens of that device name', async () => {
    const user = await createUser(t.app);
    const other = await createUser(t.app);
    const ipad = await issueToken(t.app, user.email, user.plainPassword, 'ipad');
    const mac = await issueToken(t.app, user.email, user.plainPassword, 'mac');
    const othersIpad = await issueToken(t.app, other.email, other.plainPassword, 'ipad');
    assert.equal(await t.app.services.tokens.revokeByName(user.id, 'ipad'), 1);
    assert.equal((await me(t, withToken(ipad))).statusCode, 401);
    assert.equal((await me(t, withToken(mac))).statusCode, 200);
    assert.equal((await me(t, withToken(othersIpad))).statusCode, 200);
  });
});

describe('token expiry with SANCTUM_EXPIRATION=1.5 (minutes, decimals allowed)', () => {
  let t: TestApp;
  let user: User;
  before(async () => {
    t = await buildTestApp({ SANCTUM_EXPIRATION: '1.5' });
    user = await createUser(t.app);
  });
  after(() => t.close());

  it('stamps expires_at 90 seconds after created_at', async () => {
    const token = await issueToken(t.app, user.email, user.plainPassword);
    const row = await tokenRow(t.db, splitToken(token).id);
    assert.ok(row?.expires_at);
    assert.equal(Date.parse(row.expires_at) - Date.parse(row.created_at), 90_000);
  });

  it('accepts a token created 60 seconds ago', async () => {
    const token = await issueToken(t.app, user.email, user.plainPassword);
    await setTokenTimes(t.db, splitToken(token).id, { created_at: minutesAgo(1), expires_at: null });
    assert.equal((await me(t, withToken(token))).statusCode, 200);
  });

  it('refuses a token created 100 seconds ago, even with no expires_at on the row', async () => {
    const token = await issueToken(t.app, user.email, user.plainPassword);
    await setTokenTimes(t.db, splitToken(token).id, { created_at: minutesAgo(100 / 60), expires_at: null });
    const response = await me(t, withToken(token));
    assert.equal(response.statusCode, 401);
    assert.equal(response.body, UNAUTHENTICATED);
  });

  it('refuses a token whose expires_at has passed though it is young', async () => {
    const token = await issueToken(t.app, user.email, user.plainPassword);
    await setTokenTimes(t.db, splitToken(token).id, { expires_at: minutesAgo(0.1) });
    assert.equal((await me(t, withToken(token))).body, UNAUTHENTICATED);
  });
});

describe('token expiry with SANCTUM_EXPIRATION null', () => {
  let t: TestApp;
  let user: User;
  before(async () => {
    t = await buildTestApp({ SANCTUM_EXPIRATION: 'null' });
    user = await createUser(t.app);
  });
  after(() => t.close());

  it('never expires a token by age', async () => {
    const token = await issueToken(t.app, user.email, user.plainPassword);
    await setTokenTimes(t.db, splitToken(token).id, { created_at: '2015-01-01T00:00:00.000Z' });
    assert.equal((await me(t, withToken(token))).statusCode, 200);
  });

  it('still honours an expires_at set on the token', async () => {
    const token = await issueToken(t.app, user.email, user.plainPassword);
    await setTokenTimes(t.db, splitToken(token).id, { expires_at: minutesAgo(1) });
    assert.equal((await me(t, withToken(token))).body, UNAUTHENTICATED);
    await setTokenTimes(t.db, splitToken(token).id, { expires_at: new Date(Date.now() + 60_000).toISOString() });
    assert.equal((await me(t, withToken(token))).statusCode, 200);
  });
});

describe('last_used_at', () => {
  let t: TestApp;
  let user: User;
  before(async () => {
    t = await buildTestApp();
    user = await createUser(t.app);
  });
  after(() => t.close());

  const lastUsed = async (token: string) => (await tokenRow(t.db, splitToken(token).id))?.last_used_at ?? null;

  it('is set at the first use', async () => {
    const token = await issueToken(t.app, user.email, user.plainPassword);
    assert.equal(await lastUsed(token), null);
    const start = Date.now();
    await me(t, withToken(token));
    const stamped = await lastUsed(token);
    assert.ok(stamped !== null);
    assert.ok(Date.parse(stamped) >= start - 1 && Date.parse(stamped) <= Date.now());
  });

  it('is not rewritten by a second use within a minute', async () => {
    const token = await issueToken(t.app, user.email, user.plainPassword);
    const recent = minutesAgo(0.5);
    await setTokenTimes(t.db, splitToken(token).id, { last_used_at: recent });
    await me(t, withToken(token));
    await me(t, withToken(token));
    assert.equal(await lastUsed(token), recent);
  });

  it('is rewritten when it is more than a minute old', async () => {
    const token = await issueToken(t.app, user.email, user.plainPassword);
    const old = minutesAgo(2);
    await setTokenTimes(t.db, splitToken(token).id, { last_used_at: old });
    await me(t, withToken(token));
    const stamped = await lastUsed(token);
    assert.ok(stamped !== null && Date.parse(stamped) > Date.parse(old) + 60_000);
  });

  it('is not touched by a refused token', async () => {
    const token = await issueToken(t.app, user.email, user.plainPassword);
    const { id } = splitToken(token);
    await me(t, withToken(`${id}|${sanctumSecret()}`));
    assert.equal(await lastUsed(token), null);
  });
});

describe('abilities', () => {
  let t: TestApp;
  let admin: User;
  before(async () => {
    t = await buildTestApp();
    admin = await createUser(t.app, { admin: true });
  });
  after(() => t.close());

  it('a token limited to posts:read gets 403 on POST /api/posts, and creates nothing', async () => {
    const { plaintext } = await t.app.services.tokens.issue(admin.id, 'reader', ['posts:read']);
    const response = await t.app.inject({ method: 'POST', url: '/api/posts', payload: { title: 'Not allowed' }, headers: withToken(plaintext) });
    assert.equal(response.statusCode, 403);
    assert.equal(response.body, UNAUTHORIZED);
    const count = await t.db.kysely.selectFrom('posts').select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow();
    assert.equal(Number(count.n), 0);
  });

  it('a token with no abilities still authenticates routes that need none', async () => {
    const { plaintext } = await t.app.services.tokens.issue(admin.id, 'none', []);
    assert.equal((await me(t, withToken(plaintext))).statusCode, 200);
    const write = await t.app.inject({ method: 'POST', url: '/api/posts', payload: { title: 'Nope' }, headers: withToken(plaintext) });
    assert.equal(write.body, UNAUTHORIZED);
  });

  it('stores the abilities given to issue()', async () => {
    const { id } = await t.app.services.tokens.issue(admin.id, 'both', ['posts:read', 'posts:write']);
    assert.deepEqual(JSON.parse((await tokenRow(t.db, id))?.abilities ?? 'null'), ['posts:read', 'posts:write']);
  });
});
