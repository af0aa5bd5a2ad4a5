// PostgreSQL only: one counter that every committed change to what the read cache keeps moves
// (src/perf/read-cache.ts). A cache may answer from memory only after it has read this counter, in
// a query sent after the request arrived, and found it unchanged since its values were loaded.
//
// What moves it: any change to posts; an update or deletion of a user; the deletion of a token or
// a change to what authenticates it (last_used_at alone changes nothing a cache answers with).
// Since migration 2026_11_30_000001 a new user or token moves it too (the panel's kept tables).
//
// The triggers are deferred to the commit, and a transaction moves the counter once however many
// rows it changes: the counter's row is locked only for the last moment of a writing
// transaction, after every other lock it takes, so two writers cannot deadlock on it. The
// counter becomes visible with the transaction's own rows, never before them (a sequence would
// be seen before the commit and so could not be trusted).
//
// SQLite needs none of this: a reader there sees every commit through SQLite's own counters
// (src/perf/commit-watch.ts) without a round trip.
import { sql } from 'kysely';
import { isPostgres, type AnyDb } from './helpers.js';

const TRIGGERS: [name: string, table: string, events: string, when: string][] = [
  ['posts_data_version', 'posts', 'insert or update or delete', ''],
  ['users_data_version', 'users', 'update or delete', ''],
  ['tokens_data_version_delete', 'personal_access_tokens', 'delete', ''],
  [
    'tokens_data_version_update',
    'personal_access_tokens',
    'update',
    'when ((old.token, old.abilities, old.expires_at, old.created_at, old.user_id) is distinct from (new.token, new.abilities, new.expires_at, new.created_at, new.user_id))',
  ],
];

export async function up(db: AnyDb): Promise<void> {
  if (!isPostgres(db)) return;
  await sql`create table data_version (id smallint primary key check (id = 1), n bigint not null)`.execute(db);
  await sql`insert into data_version (id, n) values (1, 1)`.execute(db);
  // A transaction-local setting says the counter was already moved by this transaction.
  await sql`
    create function data_version_bump() returns trigger language plpgsql as $$
    begin
      if coalesce(current_setting('tessera.data_version_moved', true), '') <> 'on' then
        perform set_config('tessera.data_version_moved', 'on', true);
        update data_version set n = n + 1 where id = 1;
      end if;
      return null;
    end $$`.execute(db);
  for (const [name, table, events, when] of TRIGGERS) {
    await sql`
      create constraint trigger ${sql.raw(name)} after ${sql.raw(events)} on ${sql.raw(table)}
      deferrable initially deferred for each row ${sql.raw(when)} execute function data_version_bump()`.execute(db);
  }
}

export async function down(db: AnyDb): Promise<void> {
  if (!isPostgres(db)) return;
  for (const [name, table] of TRIGGERS) await sql`drop trigger ${sql.raw(name)} on ${sql.raw(table)}`.execute(db);
  await sql`drop function data_version_bump()`.execute(db);
  await sql`drop table data_version`.execute(db);
}
