// PostgreSQL's looks at the change counters, per request (src/perf/read-cache.ts PostgresChanges,
// src/perf/request-looks.ts): every kept read of a request may use a look sent after the request
// arrived, and only such a look, nor one sent before a write of this process completed; the
// sessions have their own counter (migration 2026_11_29_000001), read in the same look, that
// moves with every change to a session and with nothing else. On a real PostgreSQL schema.
import assert from 'node:assert/strict';
import { after, before, beforeEach, describe, it } from 'node:test';
import { sql } from 'kysely';
import type { Db } from '../../src/db/connect.js';
import { PostgresChanges, ReadCache } from '../../src/perf/read-cache.js';
import { createTestDatabase, type TestDatabase } from '../helpers.js';
import { needsPostgres } from '../support/services.js';

describe('looks at the change counters, per request (PostgreSQL)', { skip: needsPostgres }, () => {
  let database: TestDatabase;
  let db: Db;
  let other: Db;
  let changes: PostgresChanges;
  let userId: number;
  let looks: number;
  let restore: () => void;

  const counter = async (table: 'data_version' | 'session_version') =>
    Number((await sql<{ n: string }>`select n from ${sql.table(table)} where id = 1`.execute(db.kysely)).rows[0]?.n);
  /** A user's name, read from the database: what a kept read wraps. */
  const nameOf = async () => {
    const row = await other.kysely.selectFrom('users').select('name').where('id', '=', userId).executeTakeFirst();
    return row === undefined ? undefined : { value: row.name, until: null };
  };
  const rename = (on: Db, name: string) => on.kysely.updateTable('users').set({ name }).where('id', '=', userId).execute();
  const turn = () => new Promise((resolve) => setImmediate(resolve));
  const now = () => new Date().toISOString();
  const newSession = async (id: string) => {
    await db.kysely
      .insertInto('sessions')
      .values({ id, user_id: userId, admin_user_id: null, ip: null, user_agent: null, payload: '{}', expires_at: now(), updated_at: now(), created_at: now() })
      .execute();
  };

  before(async () => {
    database = await createTestDatabase();
    db = database.db;
    other = database.connectAgain();
    assert.ok(db.changes instanceof PostgresChanges);
    changes = db.changes;
    userId = (
      await db.kysely
        .insertInto('users')
        .values({ name: 'Looked', email: 'looks@example.com', password: 'x', email_verified_at: null, is_admin: 0, created_at: now(), updated_at: now() })
        .returning('id')
        .executeTakeFirstOrThrow()
    ).id;
    const reads = db.reads!;
    const query = reads.query.bind(reads);
    // Counts the looks sent on their connection (perf/pipelined-reads.ts); every query still reaches PostgreSQL.
    reads.query = ((config: { name: string }) => {
      if (config.name === 'data_version') looks += 1;
      return query(config as never);
    }) as typeof reads.query;
    restore = () => (reads.query = query);
  });
  after(async () => {
    restore();
    await database.drop();
  });
  beforeEach(() => {
    looks = 0;
  });

  it('answers every kept read of a request from its first look, at once once it has answered', async () => {
    const users = new ReadCache<number, string>(changes, 10);
    const others = new ReadCache<number, string>(changes, 10);
    await changes.request(async () => {
      assert.equal(await users.get(userId, nameOf), 'Looked');
      assert.equal(looks, 1);
      assert.equal(users.peek(userId), 'Looked', 'the answered look says at once that nothing changed');
      assert.equal(await others.get(userId, nameOf), 'Looked');
      assert.equal(await users.get(userId, nameOf), 'Looked');
      assert.equal(looks, 1, 'one look for the whole request');
    });
  });

  it('never uses a look sent before the request arrived: a commit made in between is seen', async () => {
    const users = new ReadCache<number, string>(changes, 10);
    await changes.request(() => users.get(userId, nameOf));
    // Another instance renames the user after that request's look, before the next request.
    await rename(other, 'Renamed Elsewhere');
    await changes.request(async () => {
      assert.equal(users.peek(userId), undefined, 'the older look is not this request’s');
      assert.equal(await users.get(userId, nameOf), 'Renamed Elsewhere');
    });
    assert.equal(looks, 2);
    await rename(other, 'Looked');
  });

  it('joins a look already out when it was sent after the request arrived, never one sent before', async () => {
    const users = new ReadCache<number, string>(changes, 10);
    const others = new ReadCache<number, string>(changes, 10);
    let second!: Promise<string | undefined>;
    await changes.request(async () => {
      const first = users.get(userId, nameOf);
      // The look is sent at the end of this turn: it is out (not answered) when the turn ends.
      await turn();
      const joined = others.get(userId, nameOf);
      // A request arriving now was not there when that look was sent: it waits for one of its own.
      second = changes.request(() => users.get(userId, nameOf));
      assert.equal(await first, 'Looked');
      assert.equal(await joined, 'Looked');
    });
    assert.equal(await second, 'Looked');
    assert.equal(looks, 2);
  });

  it('sends a new look after a write of this process: a read after it in the same request sees it', async () => {
    const users = new ReadCache<number, string>(changes, 10);
    await changes.request(async () => {
      assert.equal(await users.get(userId, nameOf), 'Looked');
      await rename(db, 'Renamed Here');
      assert.equal(users.peek(userId), undefined);
      assert.equal(await users.get(userId, nameOf), 'Renamed Here');
      await db.kysely.transaction().execute((trx) => trx.updateTable('users').set({ name: 'In A Transaction' }).where('id', '=', userId).execute());
      assert.equal(await users.get(userId, nameOf), 'In A Transaction');
    });
    assert.equal(looks, 3);
    // A read alone does not: the request's look still answers.
    await changes.request(async () => {
      await users.get(userId, nameOf);
      await db.kysely.selectFrom('users').select('id').execute();
      assert.equal(users.peek(userId), 'In A Transaction');
    });
    assert.equal(looks, 4);
    await rename(db, 'Looked');
  });

  it('outside any request, asks a look sent after it asked', async () => {
    const users = new ReadCache<number, string>(changes, 10);
    assert.equal(await users.get(userId, nameOf), 'Looked');
    assert.equal(users.peek(userId), undefined, 'no request to share a look with');
    await rename(other, 'Outside');
    assert.equal(await users.get(userId, nameOf), 'Outside');
    assert.equal(looks, 2);
    await rename(other, 'Looked');
  });

  it("moves the sessions' counter with a new session, a session's change or end, and nothing else with it", async () => {
    const [data, sessions] = [await counter('data_version'), await counter('session_version')];
    await newSession('looks-a');
    assert.equal(await counter('session_version'), sessions + 1, 'a new session (the security page keeps the list of them)');
    await db.kysely.updateTable('sessions').set({ payload: '{"a":1}' }).where('id', '=', 'looks-a').execute();
    assert.equal(await counter('session_version'), sessions + 2, 'a change');
    await db.kysely.deleteFrom('sessions').where('id', '=', 'looks-a').execute();
    assert.equal(await counter('session_version'), sessions + 3, 'an end');
    assert.equal(await counter('data_version'), data, 'the other kept reads stay');
    await rename(db, 'Looked Again');
    assert.equal(await counter('session_version'), sessions + 3, 'a user change does not drop the sessions');
    await rename(db, 'Looked');
  });

  it("drops a kept session on its end through another connection, and not on a user's change", async () => {
    await newSession('looks-b');
    const rows = new ReadCache<string, string>(db.sessionChanges, 10);
    let loads = 0;
    const read = async () => {
      loads += 1;
      const row = await other.kysely.selectFrom('sessions').select('payload').where('id', '=', 'looks-b').executeTakeFirst();
      return row === undefined ? undefined : { value: row.payload, until: null };
    };
    assert.equal(await changes.request(() => rows.get('looks-b', read)), '{}');
    await rename(other, 'Not A Session Change');
    assert.equal(await changes.request(() => rows.get('looks-b', read)), '{}');
    assert.equal(loads, 1);
    await other.kysely.deleteFrom('sessions').where('id', '=', 'looks-b').execute();
    assert.equal(await changes.request(() => rows.get('looks-b', read)), undefined);
    assert.equal(loads, 2);
    await rename(other, 'Looked');
  });
});
