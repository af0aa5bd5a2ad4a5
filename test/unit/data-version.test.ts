// PostgreSQL's change counter for the read caches (migration 2026_11_24_000001, PostgresChanges in
// src/perf/read-cache.ts): which writes move it and which do not, once per transaction, visible
// with the commit and not before; the lookups of one event-loop turn share one query, and a
// lookup never joins a query that was sent before it asked. On a real PostgreSQL schema.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { sql } from 'kysely';
import type { Db } from '../../src/db/connect.js';
import { ReadCache } from '../../src/perf/read-cache.js';
import { createTestDatabase, type TestDatabase } from '../helpers.js';
import { needsPostgres } from '../support/services.js';


describe('the data_version counter (PostgreSQL)', { skip: needsPostgres }, () => {
  let database: TestDatabase;
  let db: Db;
  let userId: number;
  let tokenId: number;

  const version = async (on: Db = db) => Number((await sql<{ n: string }>`select n from data_version where id = 1`.execute(on.kysely)).rows[0]?.n);
  /** A new token row of the user; its id. */
  const insertToken = async (name: string, digest: string) => {
    const now = new Date().toISOString();
    const row = await db.kysely
      .insertInto('personal_access_tokens')
      .values({ user_id: userId, name, token: digest, abilities: '["*"]', last_used_at: null, expires_at: null, created_at: now, updated_at: now })
      .returning('id')
      .executeTakeFirstOrThrow();
    return row.id;
  };
  /** Whether `write` moved the counter. */
  const moves = async (write: () => Promise<unknown>) => {
    const before = await version();
    await write();
    return (await version()) !== before;
  };

  before(async () => {
    database = await createTestDatabase();
    db = database.db;
    const now = new Date().toISOString();
    userId = (
      await db.kysely
        .insertInto('users')
        .values({ name: 'Counter', email: 'counter@example.com', password: 'x', email_verified_at: null, is_admin: 0, created_at: now, updated_at: now })
        .returning('id')
        .executeTakeFirstOrThrow()
    ).id;
    tokenId = await insertToken('phone', 'a'.repeat(64));
  });
  after(() => database.drop());

  it('moves when a user changes, a token is revoked or changes what authenticates it, or any post changes', async () => {
    const now = new Date().toISOString();
    assert.ok(await moves(() => db.kysely.updateTable('users').set({ name: 'Renamed' }).where('id', '=', userId).execute()), 'user update');
    assert.ok(await moves(() => db.kysely.updateTable('personal_access_tokens').set({ abilities: '["posts:read"]' }).where('id', '=', tokenId).execute()), 'abilities');
    assert.ok(await moves(() => db.kysely.updateTable('personal_access_tokens').set({ expires_at: now }).where('id', '=', tokenId).execute()), 'expiry');
    const post = () =>
      db.kysely
        .insertInto('posts')
        .values({ author_id: userId, title: 'T', slug: `t-${Math.random()}`, excerpt: '', body: '', locale: 'en', status: 'draft', published_at: null, created_at: now, updated_at: now })
        .returning('id')
        .executeTakeFirstOrThrow();
    let postId = 0;
    assert.ok(await moves(async () => (postId = (await post()).id)), 'post insert');
    assert.ok(await moves(() => db.kysely.updateTable('posts').set({ status: 'published' }).where('id', '=', postId).execute()), 'post update');
    assert.ok(await moves(() => db.kysely.deleteFrom('posts').where('id', '=', postId).execute()), 'post delete');
    assert.ok(await moves(() => db.kysely.deleteFrom('personal_access_tokens').where('id', '=', tokenId).execute()), 'token delete');
  });

  it('moves for a new user (the panel keeps its table of users), not for a new token, which moves token_version', async () => {
    const now = new Date().toISOString();
    const tokens = async () => Number((await sql<{ n: string }>`select n from token_version where id = 1`.execute(db.kysely)).rows[0]?.n);
    const tokensBefore = await tokens();
    // Every sign-in through the API issues a token: on data_version it would empty every kept read.
    assert.equal(await moves(() => insertToken('new', 'b'.repeat(64))), false, 'token insert');
    assert.equal(await tokens(), tokensBefore + 1, 'a new token moves token_version');
    assert.ok(
      await moves(() =>
        db.kysely
          .insertInto('users')
          .values({ name: 'New', email: 'new-counter@example.com', password: 'x', email_verified_at: null, is_admin: 0, created_at: now, updated_at: now })
          .execute(),
      ),
      'user insert',
    );
  });

  it('does not move for last_used_at alone (nothing kept shows it)', async () => {
    const id = await insertToken('used', 'c'.repeat(64));
    assert.equal(await moves(() => db.kysely.updateTable('personal_access_tokens').set({ last_used_at: new Date().toISOString() }).where('id', '=', id).execute()), false, 'last_used_at');
  });

  it('moves once for a transaction of many rows, and only when it commits', async () => {
    const other = database.connectAgain();
    const start = await version();
    await db.kysely.transaction().execute(async (trx) => {
      for (let i = 0; i < 5; i += 1) await trx.updateTable('users').set({ name: `Name ${i}` }).where('id', '=', userId).execute();
      // Not yet visible to another connection: the triggers run at the commit.
      assert.equal(await version(other), start);
    });
    assert.equal(await version(other), start + 1);
    await assert.rejects(
      db.kysely.transaction().execute(async (trx) => {
        await trx.updateTable('users').set({ name: 'Rolled back' }).where('id', '=', userId).execute();
        throw new Error('roll back');
      }),
    );
    assert.equal(await version(other), start + 1);
  });

  it('answers every lookup of one event-loop turn with one query, sent after the last of them', async () => {
    const reads = db.reads!;
    const sent: string[] = [];
    const query = reads.query.bind(reads);
    // Counts the queries the looks' connection runs (perf/pipelined-reads.ts); every one still reaches PostgreSQL.
    reads.query = ((config: { name: string }) => {
      sent.push(config.name);
      return query(config as never);
    }) as typeof reads.query;
    try {
      const cache = new ReadCache<number, string>(db.changes, 10);
      let loads = 0;
      const load = async () => ({ value: `v${(loads += 1)}`, until: null });
      const turn = await Promise.all(Array.from({ length: 20 }, () => cache.get(1, load)));
      assert.equal(sent.filter((name) => name === 'data_version').length, 1);
      // All twenty saw the cache empty and loaded; the last value loaded is kept.
      assert.equal(new Set(turn).size, 20);
      assert.equal(await cache.get(1, load), 'v20');
      assert.equal(loads, 20);
      assert.equal(sent.filter((name) => name === 'data_version').length, 2);

      // A lookup that asks after the turn's query was sent gets a query of its own, which sees a
      // commit made in between.
      const first = db.changes.version() as Promise<number>;
      await new Promise((resolve) => setImmediate(resolve));
      await db.kysely.updateTable('users').set({ name: 'Between' }).where('id', '=', userId).execute();
      const second = db.changes.version() as Promise<number>;
      assert.ok((await second) > (await first));
      assert.equal(await cache.get(1, load), 'v21', 'the kept value was dropped by the change');
    } finally {
      reads.query = query;
    }
  });
});
