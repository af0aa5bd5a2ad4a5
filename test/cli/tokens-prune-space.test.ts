// tokens:prune on a large delete gives the disk back: 100,000 tokens deleted while another
// connection (the service's) stays open used to leave a WAL of tens of MB; it is truncated now,
// and --vacuum shrinks the database file too. On PostgreSQL the command vacuums the table.
import assert from 'node:assert/strict';
import { statSync } from 'node:fs';
import { after, before, describe, it } from 'node:test';
import { sql } from 'kysely';
import type { Db } from '../../src/db/connect.js';
import { needsPostgres, sqliteOnly } from '../support/services.js';
import { createCliHarness, type CliHarness } from './harness.js';

const HOUR = 3_600_000;

/** Inserts `count` tokens of `user` expired an hour ago, in one statement (seconds, not minutes). */
async function insertExpired(db: Db, user: number, count: number): Promise<void> {
  const expired = new Date(Date.now() - HOUR).toISOString();
  const created = new Date(Date.now() - 2 * HOUR).toISOString();
  if (db.dialect === 'postgres') {
    await sql`insert into personal_access_tokens (user_id, name, token, abilities, last_used_at, expires_at, created_at, updated_at)
      select ${user}, 'bulk', lpad(i::text, 64, '0'), '["*"]', null, ${expired}, ${created}, ${created} from generate_series(1, ${count}) as i`.execute(db.kysely);
    return;
  }
  await sql`with recursive n(i) as (select 1 union all select i + 1 from n where i < ${count})
    insert into personal_access_tokens (user_id, name, token, abilities, last_used_at, expires_at, created_at, updated_at)
    select ${user}, 'bulk', printf('%064d', i), '["*"]', null, ${expired}, ${created}, ${created} from n`.execute(db.kysely);
}

const bytes = (path: string): number => {
  try {
    return statSync(path).size;
  } catch {
    return 0;
  }
};

describe('tokens:prune after a large delete', () => {
  let h: CliHarness;
  let user: number;
  before(async () => {
    h = await createCliHarness();
    user = (await h.services.users.create({ name: 'Bulk', email: 'bulk@example.com', password: 'correct horse battery' })).id;
    await h.services.tokens.issue(user, 'still valid');
  });
  after(() => h.close());

  const left = async () => (await h.db.kysely.selectFrom('personal_access_tokens').select('name').execute()).map((row) => row.name);

  it('truncates the SQLite WAL, and with --vacuum shrinks the file', { skip: sqliteOnly('the WAL and the file are SQLite\'s') }, async () => {
    const file = h.db.sqlite!.name;
    await insertExpired(h.db, user, 100_000);
    // The insert's own WAL is not what is measured: the test's connection (the service's, in
    // production) stays open, so the CLI's is never the last one, which would remove the WAL.
    h.db.sqlite!.pragma('wal_checkpoint(TRUNCATE)');
    const full = bytes(file);
    assert.ok(full > 10 * 1024 * 1024, `100,000 tokens take room: ${full} bytes`);

    const pruned = await h.cli(['tokens:prune']);
    assert.equal(pruned.code, 0, pruned.stderr);
    assert.equal(pruned.stdout, 'Deleted 100000 expired tokens.\n');
    assert.deepEqual(await left(), ['still valid']);
    assert.equal(bytes(`${file}-wal`), 0, `the WAL the delete filled is truncated (file ${full} bytes)`);
    assert.ok(bytes(file) > full * 0.9, 'without --vacuum the file keeps its size (its pages are free for reuse)');

    const vacuumed = await h.cli(['tokens:prune', '--vacuum']);
    assert.equal(vacuumed.code, 0, vacuumed.stderr);
    assert.match(vacuumed.stdout, /^Deleted 0 expired tokens\.\nVacuumed the database: \d+\.\d MB → \d+\.\d MB \(with its write-ahead log\)\.\n$/);
    assert.ok(bytes(file) < full / 20, `the file shrank: ${full} → ${bytes(file)} bytes`);
    assert.equal(bytes(`${file}-wal`), 0, 'VACUUM wrote the whole database through the WAL, truncated after');
    assert.deepEqual(await left(), ['still valid']);
  });

  it('vacuums the tokens table on PostgreSQL', { skip: needsPostgres }, async () => {
    await insertExpired(h.db, user, 20_000);
    const result = await h.cli(['tokens:prune', '--vacuum']);
    assert.equal(result.code, 0, result.stderr);
    const match = /^Deleted 20000 expired tokens\.\nVacuumed personal_access_tokens: (\d+\.\d) MB → (\d+\.\d) MB \(.*VACUUM FULL.*\)\.\n$/.exec(result.stdout);
    assert.ok(match, result.stdout);
    assert.ok(Number(match[2]) <= Number(match[1]), result.stdout);
    assert.deepEqual(await left(), ['still valid']);
  });
});
