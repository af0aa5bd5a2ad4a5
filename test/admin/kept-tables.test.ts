// The panel's tables of posts and of users are kept in memory (perf/kept-reads.ts
// keptAdminTables), and stay exact across instances: a post, a user or a token added, changed or
// removed through one instance shows on the next page of the other, with its count. On
// PostgreSQL a table page whose rows did not change reads none of them: its one round trip is the
// look at the change counters.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { FastifyInstance } from 'fastify';
import { createUser, twoInstances } from '../helpers.js';
import { WebClient } from '../support/client.js';
import { postgresTraffic } from '../support/query-plan.js';
import { needsPostgres } from '../support/services.js';
import { decode } from './support.js';

/** The pager's "Page 1 of 1 · N in all" of a table page: its N. */
const totalOf = (html: string): number => Number(/· (\d+) in all/.exec(html)?.[1] ?? Number.NaN);
/** The titles linked from a posts page, in order. */
const titlesOf = (html: string): string[] => [...html.matchAll(/<td><a href="\/admin\/posts\/\d+\/edit">([^<]*)<\/a>/g)].map((match) => decode(match[1] ?? ''));
/** The tokens cell of a user's row on a users page. */
const tokensOf = (html: string, email: string): string | undefined => {
  const row = html.split('<tr>').find((each) => each.includes(`>${email}<`));
  return row === undefined ? undefined : /data-label="Tokens">(?:<a [^>]*>)?(\d+)</.exec(row)?.[1];
};

describe('the panel tables, changed through another instance', () => {
  let a: FastifyInstance;
  let b: FastifyInstance;
  let close: () => Promise<void>;
  let there: WebClient;

  before(async () => {
    ({ a, b, close } = await twoInstances());
    const admin = await createUser(a, { email: 'kept-tables-admin@example.com', admin: true });
    there = new WebClient(b);
    await there.adminLogin(admin.email, admin.plainPassword);
  });
  after(() => close());

  /** A table page of the other instance, asked twice (the second from memory when nothing changed). */
  const page = async (path: string) => {
    assert.equal((await there.get(path)).statusCode, 200);
    const second = await there.get(path);
    assert.equal(second.statusCode, 200);
    return second.body;
  };

  it('shows a post added, renamed and deleted here on the next page there, with the count', async () => {
    const before = await page('/admin/posts');
    const total = totalOf(before);
    const post = await a.services.posts.create(null, { title: 'Kept table post', status: 'draft' });
    const added = await page('/admin/posts');
    assert.equal(titlesOf(added)[0], 'Kept table post');
    assert.equal(totalOf(added), total + 1);
    await a.services.posts.update(post, { title: 'Kept table post, renamed' });
    assert.equal(titlesOf(await page('/admin/posts'))[0], 'Kept table post, renamed');
    await a.services.posts.remove(post);
    const removed = await page('/admin/posts');
    assert.equal(titlesOf(removed).includes('Kept table post, renamed'), false);
    assert.equal(totalOf(removed), total);
  });

  it('shows a user added here, and the tokens given and taken, on the next page there', async () => {
    const total = totalOf(await page('/admin/users'));
    const user = await createUser(a, { email: 'kept-tables-user@example.com' });
    const added = await page('/admin/users');
    assert.equal(totalOf(added), total + 1);
    assert.equal(tokensOf(added, user.email), '0');
    const token = await a.services.tokens.issue(user.id, 'laptop');
    assert.equal(tokensOf(await page('/admin/users'), user.email), '1');
    await a.services.tokens.revoke(token.id);
    assert.equal(tokensOf(await page('/admin/users'), user.email), '0');
  });
});

describe('a panel table on PostgreSQL, nothing changed', { skip: needsPostgres }, () => {
  let a: FastifyInstance;
  let close: () => Promise<void>;
  let client: WebClient;

  before(async () => {
    ({ a, close } = await twoInstances());
    const admin = await createUser(a, { email: 'kept-tables-looks@example.com', admin: true });
    client = new WebClient(a);
    await client.adminLogin(admin.email, admin.plainPassword);
  });
  after(() => close());

  for (const path of ['/admin/posts', '/admin/users']) {
    it(`reads no row for ${path} the second time: its one round trip is the look at the change counters`, async () => {
      assert.equal((await client.get(path)).statusCode, 200);
      let status = 0;
      const { sent, acquired } = await postgresTraffic(a.db, async () => (status = (await client.get(path)).statusCode));
      assert.equal(status, 200);
      assert.deepEqual(sent, ['data_version'], 'nothing but the look reached the database');
      assert.equal(acquired, 0, 'no client was taken from the pool');
    });
  }
});
