// Two instances of the service on one database (a SQLite file both open, or one PostgreSQL
// schema): whatever one instance — or the CLI, another process writing to the database — changes
// about a token, its user or a post holds for the other from its very next request. On SQLite the
// instances keep token lookups and pages of the post list in memory (src/perf/read-cache.ts): these
// tests are what proves the cache honours a revocation at once, in every instance.
import assert from 'node:assert/strict';
import { setTimeout as sleep } from 'node:timers/promises';
import { after, before, describe, it } from 'node:test';
import type { FastifyInstance } from 'fastify';
import { buildApp } from '../../src/app.js';
import type { Db } from '../../src/db/connect.js';
import { bearer, createTestDatabase, createUser, issueToken, testConfig, type TestDatabase } from '../helpers.js';
import { UNAUTHENTICATED, UNAUTHORIZED, insertPost, splitToken } from './support.js';

describe('two instances on one database', () => {
  let database: TestDatabase;
  let other: Db;
  let a: FastifyInstance;
  let b: FastifyInstance;

  before(async () => {
    database = await createTestDatabase({ file: true });
    other = database.connectAgain();
    a = await buildApp(testConfig(), { db: database.db });
    b = await buildApp(testConfig(), { db: other });
    // The API's locale filter accepts the languages the `locales` setting offers.
    await a.services.settings.put('locales', ['en', 'fr', 'de', 'it', 'nl'], true);
  });
  after(async () => {
    await a.close();
    await b.close();
    await database.drop();
  });

  const me = (app: FastifyInstance, token: string) => app.inject({ method: 'GET', url: '/api/user', headers: bearer(token) });

  /** A user with a token that instance A has just used twice (so A has it in memory, where it can). */
  async function warmToken(): Promise<{ user: Awaited<ReturnType<typeof createUser>>; token: string }> {
    const user = await createUser(a);
    const token = await issueToken(a, user.email, user.plainPassword);
    for (let i = 0; i < 2; i += 1) assert.equal((await me(a, token)).statusCode, 200);
    return { user, token };
  }

  it('a token revoked on one instance is refused by the other at its next request', async () => {
    const { token } = await warmToken();
    assert.equal((await b.inject({ method: 'DELETE', url: '/api/tokens/current', headers: bearer(token) })).statusCode, 204);
    const response = await me(a, token);
    assert.equal(response.statusCode, 401);
    assert.equal(response.body, UNAUTHENTICATED);
  });

  it('"revoke all" on one instance ends every token of the user on the other', async () => {
    const { user, token } = await warmToken();
    const second = await issueToken(a, user.email, user.plainPassword, 'second');
    // Issuing wrote to the database: both tokens are used again to be in memory.
    for (const each of [token, second, token, second]) assert.equal((await me(a, each)).statusCode, 200);
    assert.equal((await b.inject({ method: 'DELETE', url: '/api/tokens', headers: bearer(second) })).statusCode, 204);
    assert.equal((await me(a, token)).statusCode, 401);
    assert.equal((await me(a, second)).statusCode, 401);
  });

  it('a password change on one instance ends the other tokens on the other', async () => {
    const { user, token } = await warmToken();
    const caller = await issueToken(b, user.email, user.plainPassword, 'caller');
    const change = await b.inject({
      method: 'PUT',
      url: '/api/user/password',
      headers: bearer(caller),
      payload: { current_password: user.plainPassword, password: 'a brand new passphrase', password_confirmation: 'a brand new passphrase' },
    });
    assert.equal(change.statusCode, 204);
    assert.equal((await me(a, token)).statusCode, 401);
    assert.equal((await me(a, caller)).statusCode, 200);
  });

  it('a token deleted by another process (the CLI, a direct write) is refused at once', async () => {
    const { token } = await warmToken();
    await other.kysely.deleteFrom('personal_access_tokens').where('id', '=', splitToken(token).id).execute();
    assert.equal((await me(a, token)).statusCode, 401);
  });

  it('a profile change on one instance is what the other answers next', async () => {
    const { token } = await warmToken();
    const update = await b.inject({ method: 'PUT', url: '/api/user', headers: bearer(token), payload: { name: 'Renamed Elsewhere' } });
    assert.equal(update.statusCode, 200);
    const response = await me(a, token);
    assert.equal(response.statusCode, 200);
    assert.equal((response.json() as { name: string }).name, 'Renamed Elsewhere');
  });

  it('an admin demoted by another process loses the write API at once', async () => {
    const admin = await createUser(a, { admin: true });
    const token = await issueToken(a, admin.email, admin.plainPassword);
    const write = (title: string) => a.inject({ method: 'POST', url: '/api/posts', headers: bearer(token), payload: { title } });
    assert.equal((await write('Before the demotion')).statusCode, 201);
    for (let i = 0; i < 2; i += 1) assert.equal((await me(a, token)).statusCode, 200);
    await other.kysely.updateTable('users').set({ is_admin: 0 }).where('id', '=', admin.id).execute();
    const response = await write('After the demotion');
    assert.equal(response.statusCode, 403);
    assert.equal(response.body, UNAUTHORIZED);
  });

  it('a token revoked on the same instance is refused at its next request', async () => {
    const { token } = await warmToken();
    assert.equal((await a.inject({ method: 'DELETE', url: '/api/tokens/current', headers: bearer(token) })).statusCode, 204);
    assert.equal((await me(a, token)).statusCode, 401);
  });

  it('a token that reaches its expiry while in memory is refused (nothing written in between)', async () => {
    const user = await createUser(a);
    const { plaintext } = await a.services.tokens.issue(user.id, 'short');
    await other.kysely
      .updateTable('personal_access_tokens')
      .set({ expires_at: new Date(Date.now() + 1500).toISOString(), last_used_at: new Date().toISOString() })
      .where('id', '=', splitToken(plaintext).id)
      .execute();
    for (let i = 0; i < 2; i += 1) assert.equal((await me(a, plaintext)).statusCode, 200);
    await sleep(1600);
    assert.equal((await me(a, plaintext)).statusCode, 401);
  });

  describe('the public post list', () => {
    // A locale of its own per test: the list is then exactly the posts the test made.
    const slugs = async (app: FastifyInstance, locale: string): Promise<string[]> => {
      const response = await app.inject({ method: 'GET', url: `/api/posts?locale=${locale}` });
      assert.equal(response.statusCode, 200);
      return (response.json() as { data: { slug: string }[] }).data.map((post) => post.slug);
    };
    const warmList = async (locale: string): Promise<string[]> => {
      const first = await slugs(a, locale);
      assert.deepEqual(await slugs(a, locale), first);
      return first;
    };

    it('a post published on the other instance is listed at once', async () => {
      const admin = await createUser(b, { admin: true });
      const token = await issueToken(b, admin.email, admin.plainPassword);
      assert.deepEqual(await warmList('de'), []);
      const created = await b.inject({
        method: 'POST',
        url: '/api/posts',
        headers: bearer(token),
        payload: { title: 'Neu', slug: 'neu-de', locale: 'de', status: 'published' },
      });
      assert.equal(created.statusCode, 201);
      assert.deepEqual(await slugs(a, 'de'), ['neu-de']);
    });

    it('a post withdrawn by another process leaves the list at once', async () => {
      const post = await insertPost(other, { locale: 'it', slug: 'ritirato-it' });
      assert.deepEqual(await warmList('it'), ['ritirato-it']);
      await other.kysely.updateTable('posts').set({ status: 'archived' }).where('id', '=', post.id).execute();
      assert.deepEqual(await slugs(a, 'it'), []);
    });

    it('a scheduled post appears when its time comes, with nothing written meanwhile', async () => {
      await insertPost(other, { locale: 'nl', slug: 'nu-nl' });
      await insertPost(other, { locale: 'nl', slug: 'straks-nl', published_at: new Date(Date.now() + 1500).toISOString() });
      assert.deepEqual(await warmList('nl'), ['nu-nl']);
      await sleep(1600);
      assert.deepEqual(await slugs(a, 'nl'), ['straks-nl', 'nu-nl']);
    });
  });
});
