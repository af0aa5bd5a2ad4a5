// PostgreSQL: statement() reads share one pipelined connection (perf/pipelined-reads.ts), each
// read still gets its own answer, a failing read fails alone, and a lost connection is replaced
// at the next read.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { statement, type Arg } from '../../src/db/connect.js';
import { createTestDatabase, onPostgres, type TestDatabase } from '../helpers.js';

describe('pipelined reads', { skip: !onPostgres && 'PostgreSQL only' }, () => {
  let database: TestDatabase;
  const now = new Date().toISOString();
  const emails = Array.from({ length: 12 }, (_, i) => `pipelined${i}@reads.test`);
  const byEmail = statement('pipelined_reads_test_user', (kysely, arg: Arg<{ email: string }>) => kysely.selectFrom('users').select(['id', 'email']).where('email', '=', arg('email')));
  // The backend that answers a statement() read: the pipelined connection's.
  const backend = statement('pipelined_reads_test_pid', (kysely) => kysely.selectNoFrom((eb) => eb.fn<number>('pg_backend_pid').as('pid')));
  const pidOfReads = async () => (await backend.first(database.db, {}))!.pid;

  before(async () => {
    database = await createTestDatabase();
    await database.db.kysely
      .insertInto('users')
      .values(emails.map((email) => ({ name: email, email, password: null, email_verified_at: null, is_admin: 0, created_at: now, updated_at: now })))
      .execute();
  });
  after(() => database.drop());

  it('answers reads sent together each with its own rows, on one connection', async () => {
    const pid = await pidOfReads();
    const [rows, pids] = await Promise.all([Promise.all(emails.map((email) => byEmail.first(database.db, { email }))), Promise.all([pidOfReads(), pidOfReads()])]);
    assert.deepEqual(
      rows.map((row) => row?.email),
      emails,
    );
    assert.deepEqual(pids, [pid, pid]);
    // The pool's connections are others: the Kysely reads did not go there.
    const { rows: pooled } = await database.db.pool!.query<{ pid: number }>('select pg_backend_pid() as pid');
    assert.notEqual(pooled[0]!.pid, pid);
  });

  it('fails a read that fails alone, and the reads around it get their answers', async () => {
    const broken = statement('pipelined_reads_test_broken', (kysely) => kysely.selectFrom('users').select((eb) => eb.fn<number>('pg_sleep_not_a_function').as('x')));
    const [first, failed, last] = await Promise.allSettled([byEmail.first(database.db, { email: emails[0]! }), broken.first(database.db, {}), byEmail.first(database.db, { email: emails[1]! })]);
    assert.equal(first.status === 'fulfilled' && first.value?.email, emails[0]);
    assert.equal(failed.status, 'rejected');
    assert.equal(last.status === 'fulfilled' && last.value?.email, emails[1]);
  });

  it('opens a new connection at the next read once its connection is lost', async () => {
    const pid = await pidOfReads();
    const pool = database.db.pool!;
    await pool.query('select pg_terminate_backend($1)', [pid]);
    // Until the backend is gone (pg_terminate_backend only signals it).
    for (let tries = 0; Number((await pool.query('select count(*) as n from pg_stat_activity where pid = $1', [pid])).rows[0].n) > 0; tries += 1) {
      assert.ok(tries < 200, 'the backend ends');
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
    // The read that meets the closed connection may fail (whether or not the client has handled
    // the socket's end yet); the one right after it is answered, on a new connection.
    await byEmail.first(database.db, { email: emails[2]! }).catch(() => undefined);
    assert.equal((await byEmail.first(database.db, { email: emails[2]! }))?.email, emails[2]);
    assert.notEqual(await pidOfReads(), pid);
  });

  it('drops its connection at a read that failed for the connection, before the socket is seen to close', async () => {
    const reads = database.db.reads!;
    await pidOfReads();
    const client = (reads as unknown as { client: { query: (...args: unknown[]) => Promise<unknown> } | null }).client!;
    // A write that meets a reset socket, as a timer's read can before the loop has read the socket's end.
    const query = client.query.bind(client);
    client.query = () => Promise.reject(Object.assign(new Error('write ECONNRESET'), { code: 'ECONNRESET' }));
    try {
      await assert.rejects(byEmail.first(database.db, { email: emails[0]! }), /ECONNRESET/);
    } finally {
      client.query = query;
    }
    assert.equal((await byEmail.first(database.db, { email: emails[0]! }))?.email, emails[0], 'the next read is answered');
    assert.notEqual((reads as unknown as { client: unknown }).client, client, 'on another connection');
    // A query PostgreSQL refuses keeps the connection: only its own read fails.
    const kept = (reads as unknown as { client: unknown }).client;
    const broken = statement('pipelined_reads_test_refused', (kysely) => kysely.selectFrom('users').select((eb) => eb.fn<number>('no_such_function_here').as('x')));
    await assert.rejects(broken.first(database.db, {}));
    assert.equal((reads as unknown as { client: unknown }).client, kept);
  });
});
