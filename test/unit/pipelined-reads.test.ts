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
    await database.db.pool!.query('select pg_terminate_backend($1)', [pid]);
    // The read that meets the closed connection may fail; one after it is answered, elsewhere.
    await byEmail.first(database.db, { email: emails[2]! }).catch(() => undefined);
    await new Promise((resolve) => setTimeout(resolve, 50));
    assert.equal((await byEmail.first(database.db, { email: emails[2]! }))?.email, emails[2]);
    assert.notEqual(await pidOfReads(), pid);
  });
});
