// PostgreSQL only: a new user or a new token moves the data_version counter too (migration
// 2026_11_24_000001 and its data_version_bump(), once per transaction, at the commit). Until now
// nothing kept could hold a row that did not exist yet; the panel's tables of users (each with
// its number of tokens) are now kept in memory (src/perf/kept-reads.ts keptAdminTables), and a
// user or a token added through any instance must show on the next page of every instance.
import { sql } from 'kysely';
import { isPostgres, type AnyDb } from './helpers.js';

const TRIGGERS: [name: string, table: string][] = [
  ['users_data_version_insert', 'users'],
  ['tokens_data_version_insert', 'personal_access_tokens'],
];

export async function up(db: AnyDb): Promise<void> {
  if (!isPostgres(db)) return;
  for (const [name, table] of TRIGGERS) {
    await sql`
      create constraint trigger ${sql.raw(name)} after insert on ${sql.raw(table)}
      deferrable initially deferred for each row execute function data_version_bump()`.execute(db);
  }
}

export async function down(db: AnyDb): Promise<void> {
  if (!isPostgres(db)) return;
  for (const [name, table] of TRIGGERS) await sql`drop trigger ${sql.raw(name)} on ${sql.raw(table)}`.execute(db);
}
