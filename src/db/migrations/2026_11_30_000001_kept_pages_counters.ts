// PostgreSQL only: more changes move the change counters of the read caches (data_version,
// migration 2026_11_24_000001; session_version, 2026_11_29_000001; once per transaction, at the
// commit), for the reads of pages now kept in memory (src/perf/kept-reads.ts):
// - the panel's table of users shows each user's number of tokens: a new user or a new token
//   moves data_version (until now nothing kept could hold a row that did not exist yet);
// - the security page shows the user's passkeys (their names and last use) and pending email
//   change: any change to those tables moves data_version;
// - it lists the user's browser sessions too: a new session moves session_version, as its
//   changes and its end already did;
// - the tokens page lists the user's tokens with their last use: a new counter, token_version,
//   moves with any change to a token, last_used_at included (written at most once a minute per
//   token), so that an API request's bookkeeping does not empty the other kept reads.
// A change made through any instance then shows on the next page of every instance.
import { sql } from 'kysely';
import { isPostgres, type AnyDb } from './helpers.js';

const TRIGGERS: [name: string, table: string, events: string, bump: string][] = [
  ['users_data_version_insert', 'users', 'insert', 'data_version_bump'],
  ['tokens_data_version_insert', 'personal_access_tokens', 'insert', 'data_version_bump'],
  ['passkeys_data_version', 'passkeys', 'insert or update or delete', 'data_version_bump'],
  ['email_changes_data_version', 'email_changes', 'insert or update or delete', 'data_version_bump'],
  ['sessions_session_version_insert', 'sessions', 'insert', 'session_version_bump'],
  ['tokens_token_version', 'personal_access_tokens', 'insert or update or delete', 'token_version_bump'],
];

/**
 * The trigger function that moves `counter` once per transaction. It names the counter's table
 * with the schema of the table whose change fired it (TG_TABLE_SCHEMA): the plain name the first
 * versions used was looked up in the writer's search_path, so a row written by a connection with
 * another one (an operator's psql on a service that runs in a schema of its own) failed.
 */
function bumpFunction(counter: 'data_version' | 'session_version' | 'token_version', schemaOfTable: boolean) {
  const update = schemaOfTable ? `execute format('update %I.${counter} set n = n + 1 where id = 1', TG_TABLE_SCHEMA);` : `update ${counter} set n = n + 1 where id = 1;`;
  return sql`
    create or replace function ${sql.raw(`${counter}_bump`)}() returns trigger language plpgsql as $$
    begin
      if coalesce(current_setting('tessera.${sql.raw(counter)}_moved', true), '') <> 'on' then
        perform set_config('tessera.${sql.raw(counter)}_moved', 'on', true);
        ${sql.raw(update)}
      end if;
      return null;
    end $$`;
}

export async function up(db: AnyDb): Promise<void> {
  if (!isPostgres(db)) return;
  await sql`create table token_version (id smallint primary key check (id = 1), n bigint not null)`.execute(db);
  await sql`insert into token_version (id, n) values (1, 1)`.execute(db);
  for (const counter of ['data_version', 'session_version', 'token_version'] as const) await bumpFunction(counter, true).execute(db);
  for (const [name, table, events, bump] of TRIGGERS) {
    await sql`
      create constraint trigger ${sql.raw(name)} after ${sql.raw(events)} on ${sql.raw(table)}
      deferrable initially deferred for each row execute function ${sql.raw(bump)}()`.execute(db);
  }
}

export async function down(db: AnyDb): Promise<void> {
  if (!isPostgres(db)) return;
  for (const [name, table] of TRIGGERS) await sql`drop trigger ${sql.raw(name)} on ${sql.raw(table)}`.execute(db);
  await sql`drop function token_version_bump()`.execute(db);
  await sql`drop table token_version`.execute(db);
  for (const counter of ['data_version', 'session_version'] as const) await bumpFunction(counter, false).execute(db);
}
