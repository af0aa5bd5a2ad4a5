// PostgreSQL only: a counter that every committed change to a session moves, as data_version
// (migration 2026_11_24_000001) does for what else the read caches keep. The sessions have their
// own: a sign-in, a flash message or a session's idle end moved once a minute would otherwise
// drop every kept post list, user and token lookup. With it, a session's row is kept in memory on
// PostgreSQL as on SQLite (src/perf/kept-reads.ts keptSessionRows): a signed-in page reads it
// from the look at both counters that its request makes anyway (src/perf/read-cache.ts), and a
// session ended anywhere (a sign-out, a revocation, another instance) moves the counter.
//
// A new session (an insert) did not move it: no read could have kept a row that did not exist.
// Since migration 2026_11_30_000001 it does (the security page keeps the list of a user's
// sessions). An upsert that finds the row fires the update trigger. Deferred to the commit and once per
// transaction, as data_version's triggers are, so it is locked last and seen with the rows.
import { sql } from 'kysely';
import { isPostgres, type AnyDb } from './helpers.js';

export async function up(db: AnyDb): Promise<void> {
  if (!isPostgres(db)) return;
  await sql`create table session_version (id smallint primary key check (id = 1), n bigint not null)`.execute(db);
  await sql`insert into session_version (id, n) values (1, 1)`.execute(db);
  await sql`
    create function session_version_bump() returns trigger language plpgsql as $$
    begin
      if coalesce(current_setting('tessera.session_version_moved', true), '') <> 'on' then
        perform set_config('tessera.session_version_moved', 'on', true);
        update session_version set n = n + 1 where id = 1;
      end if;
      return null;
    end $$`.execute(db);
  await sql`
    create constraint trigger sessions_session_version after update or delete on sessions
    deferrable initially deferred for each row execute function session_version_bump()`.execute(db);
}

export async function down(db: AnyDb): Promise<void> {
  if (!isPostgres(db)) return;
  await sql`drop trigger sessions_session_version on sessions`.execute(db);
  await sql`drop function session_version_bump()`.execute(db);
  await sql`drop table session_version`.execute(db);
}
