// Authentication bypass attempts against every route that needs a token (found from the app,
// so a new route is covered), each sent with an invalid body too: whatever the trick, the
// answer is 401 {"message":"Unauthenticated.","errors":{}} before any validation, and nothing
// in the database changes.
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { crc32 } from 'node:zlib';
import { createUser, issueToken, type TestApp } from '../helpers.js';
import {
  UNAUTHENTICATED,
  buildAppWithRoutes,
  diffSnapshots,
  figures,
  fillPath,
  isApiRoute,
  needsToken,
  snapshotDatabase,
  type RouteInfo,
} from './support.js';

/** A well-formed secret (40 alphanumerics + their CRC32) that was never issued. */
function forgedSecret(prefix = ''): string {
  const entropy = 'A'.repeat(20) + Math.random().toString(36).slice(2, 12).padEnd(20, 'b');
  return `${prefix}${entropy}${crc32(entropy).toString(16).padStart(8, '0')}`;
}

const split = (token: string) => {
  const pipe = token.indexOf('|');
  return { id: token.slice(0, pipe), secret: token.slice(pipe + 1) };
};

type Attempt = { name: string; headers?: Record<string, string>; query?: string };

describe('authentication bypass attempts', () => {
  let t: TestApp;
  let routes: RouteInfo[];
  let mine: string;
  let theirs: string;
  let expired: string;
  let revoked: string;
  let slug: string;
  let attempts: Attempt[];
  let tried = 0;

  before(async () => {
    ({ t, routes } = await buildAppWithRoutes());
    const me = await createUser(t.app, { admin: true });
    const other = await createUser(t.app, { admin: true });
    mine = await issueToken(t.app, me.email, me.plainPassword);
    theirs = await issueToken(t.app, other.email, other.plainPassword);
    expired = await issueToken(t.app, me.email, me.plainPassword, 'expired');
    await t.db.kysely
      .updateTable('personal_access_tokens')
      .set({ expires_at: new Date(Date.now() - 1000).toISOString() })
      .where('id', '=', Number(split(expired).id))
      .execute();
    revoked = await issueToken(t.app, me.email, me.plainPassword, 'revoked');
    const revocation = await t.app.inject({ method: 'DELETE', url: '/api/tokens/current', headers: { authorization: `Bearer ${revoked}` } });
    assert.equal(revocation.statusCode, 204);
    const now = new Date().toISOString();
    slug = 'a-post';
    await t.db.kysely
      .insertInto('posts')
      .values({ author_id: me.id, title: 'A post', slug, excerpt: '', body: '', locale: 'en', status: 'published', published_at: now, created_at: now, updated_at: now })
      .execute();
    // Each valid token is used once, so its last_used_at is not written during the attempts.
    for (const token of [mine, theirs]) await t.app.services.tokens.authenticate(t.app.services.tokens.parse(token));

    const { id, secret } = split(mine);
    const bearer = (value: string) => ({ authorization: `Bearer ${value}` });
    attempts = [
      { name: 'the right id with a wrong (well-formed) secret', headers: bearer(`${id}|${forgedSecret()}`) },
      { name: 'the right id with a secret one character off', headers: bearer(`${id}|${secret.slice(0, 10)}${secret[10] === 'a' ? 'b' : 'a'}${secret.slice(11)}`) },
      { name: "another user's id with my secret", headers: bearer(`${split(theirs).id}|${secret}`) },
      { name: 'id 0', headers: bearer(`0|${secret}`) },
      { name: 'id 0 with an empty secret', headers: bearer('0|') },
      { name: 'a negative id', headers: bearer(`-${id}|${secret}`) },
      { name: 'id -0', headers: bearer(`-0|${secret}`) },
      { name: 'a leading-zero id', headers: bearer(`0${id}|${secret}`) },
      { name: 'a huge id', headers: bearer(`99999999999999999999|${secret}`) },
      { name: 'an id past 2^31', headers: bearer(`2147483648|${secret}`) },
      { name: 'an id in exponent form', headers: bearer(`1e0|${secret}`) },
      { name: 'an id in hexadecimal', headers: bearer(`0x${Number(id).toString(16)}|${secret}`) },
      { name: 'a space before the pipe', headers: bearer(`${id} |${secret}`) },
      { name: 'the secret alone', headers: bearer(secret) },
      { name: 'the id alone', headers: bearer(`${id}|`) },
      { name: 'two pipes', headers: bearer(`${id}|${id}|${secret}`) },
      { name: 'the SHA-256 digest stored in the database instead of the secret', headers: bearer(`${id}|${createHash('sha256').update(secret).digest('hex')}`) },
      { name: 'an expired token', headers: bearer(expired) },
      { name: 'a revoked token', headers: bearer(revoked) },
      { name: 'the scheme in lower case', headers: { authorization: `bearer ${mine}` } },
      { name: 'the scheme in upper case', headers: { authorization: `BEARER ${mine}` } },
      { name: 'the scheme in mixed case', headers: { authorization: `BeArEr ${mine}` } },
      { name: 'no space after the scheme', headers: { authorization: `Bearer${mine}` } },
      { name: 'two spaces after the scheme', headers: { authorization: `Bearer  ${mine}` } },
      { name: 'a tab after the scheme', headers: { authorization: `Bearer\t${mine}` } },
      { name: 'a no-break space after the scheme', headers: { authorization: `Bearer\u00a0${mine}` } },
      { name: 'a space inside the token', headers: { authorization: `Bearer ${id}| ${secret}` } },
      { name: 'two tokens in one header', headers: { authorization: `Bearer ${forgedSecret()}, Bearer ${mine}` } },
      { name: 'another scheme', headers: { authorization: `Token ${mine}` } },
      { name: 'Basic credentials', headers: { authorization: `Basic ${Buffer.from(`x:${mine}`).toString('base64')}` } },
      { name: 'the token as a cookie named token, api_token, access_token', headers: { cookie: `token=${encodeURIComponent(mine)}; api_token=${encodeURIComponent(mine)}; access_token=${encodeURIComponent(mine)}` } },
      { name: 'the token as the session cookie', headers: { cookie: `tessera_session=${encodeURIComponent(mine)}` } },
      { name: 'the token as the XSRF-TOKEN cookie and header', headers: { cookie: `XSRF-TOKEN=${encodeURIComponent(mine)}`, 'x-xsrf-token': mine } },
      { name: 'the token in an X-Api-Token header', headers: { 'x-api-token': mine, 'x-auth-token': mine, 'x-access-token': mine } },
      { name: 'the token in the query parameter token', query: `token=${encodeURIComponent(mine)}` },
      { name: 'the token in the query parameter api_token', query: `api_token=${encodeURIComponent(mine)}` },
      { name: 'the token in the query parameter access_token', query: `access_token=${encodeURIComponent(mine)}` },
    ];
  });
  after(() => t.close());

  it('covers every route that needs a token', () => {
    const guarded = routes.filter(needsToken).map((route) => `${route.method} ${route.url}`);
    for (const expected of ['GET /api/user', 'PUT /api/user', 'PUT /api/user/password', 'DELETE /api/tokens/current', 'DELETE /api/tokens', 'POST /api/posts']) {
      assert.ok(guarded.includes(expected), `${expected} is among ${guarded.join(', ')}`);
    }
  });

  it('refuses every attempt on every route that needs a token with 401 and the exact body, before validating the body', async () => {
    const baseline = await snapshotDatabase(t.db);
    const targets = routes.filter((route) => needsToken(route) || (isApiRoute(route) && route.auth === 'optional-token'));
    const failures: string[] = [];
    for (const route of targets) {
      for (const attempt of attempts) {
        const path = fillPath(route.url, () => slug);
        const url = attempt.query === undefined ? path : `${path}?${attempt.query}`;
        // Optional-token routes answer anonymous callers; a bad token there is still a 401.
        if (route.auth === 'optional-token' && attempt.headers?.authorization === undefined) continue;
        const hasBody = ['POST', 'PUT', 'PATCH'].includes(route.method);
        const response = await t.app.inject({
          method: route.method as 'GET',
          url,
          headers: { accept: 'application/json', ...attempt.headers, ...(hasBody ? { 'content-type': 'application/json' } : {}) },
          ...(hasBody ? { payload: '{"title":5,"email":[],"name":{},"password":1}' } : {}),
        });
        tried += 1;
        if (response.statusCode !== 401 || response.body !== UNAUTHENTICATED) {
          failures.push(`${route.method} ${route.url} with ${attempt.name}: ${response.statusCode} ${response.body.slice(0, 120)}`);
        }
      }
    }
    assert.deepEqual(failures, []);
    assert.deepEqual(diffSnapshots(baseline, await snapshotDatabase(t.db)), [], 'nothing changed');
    figures('auth bypass', { inputs: tried, routes: targets.length, 'accepted': failures.length });
  });

  it('still accepts the genuine token afterwards (the refusals are not a broken guard)', async () => {
    const response = await t.app.inject({ url: '/api/user', headers: { authorization: `Bearer ${mine}` } });
    assert.equal(response.statusCode, 200);
    assert.equal((await t.app.inject({ url: '/api/user', headers: { authorization: `Bearer ${theirs}` } })).statusCode, 200);
  });
});

describe('authentication bypass with SANCTUM_TOKEN_PREFIX set', () => {
  let t: TestApp;
  before(async () => {
    ({ t } = await buildAppWithRoutes({ SANCTUM_TOKEN_PREFIX: 'tess_' }));
  });
  after(() => t.close());

  const cases: Array<[string, (token: string) => string]> = [
    ['the secret without its prefix', (token) => token.replace('|tess_', '|')],
    ['the secret with another prefix', (token) => token.replace('|tess_', '|evil_')],
    ['the prefix in another case', (token) => token.replace('|tess_', '|TESS_')],
  ];
  for (const [name, forge] of cases) {
    it(`refuses ${name} with 401`, async () => {
      const user = await createUser(t.app);
      const token = await issueToken(t.app, user.email, user.plainPassword);
      assert.match(token, /^\d+\|tess_/);
      const response = await t.app.inject({ url: '/api/user', headers: { authorization: `Bearer ${forge(token)}` } });
      assert.equal(response.statusCode, 401);
      assert.equal(response.body, UNAUTHENTICATED);
      assert.equal((await t.app.inject({ url: '/api/user', headers: { authorization: `Bearer ${token}` } })).statusCode, 200);
    });
  }
});
