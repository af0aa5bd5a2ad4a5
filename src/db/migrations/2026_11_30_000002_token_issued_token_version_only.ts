// PostgreSQL only: a token issued moves `token_version` alone, no longer `data_version` too
// (migration 2026_11_30_000001 made it move both, for the panel's table of users, which shows
// each user's number of tokens). Every sign-in through the API issues a token, and a move of
// `data_version` empties every read kept on every instance: the token lookups of all API
// clients, the site settings, the public pages' bodies. The panel's users table is now kept
// behind both counters (src/perf/kept-reads.ts keptAdminTables), which is the one read that
// shows a token as soon as it exists; the tokens page was already behind `token_version`.
import { sql } from 'kysely';
import { isPostgres, type AnyDb } from './helpers.js';

export async function up(db: AnyDb): Promise<void> {
  if (!isPostgres(db)) return;
  await sql`drop trigger tokens_data_version_insert on personal_access_tokens`.execute(db);
}

export async function down(db: AnyDb): Promise<void> {
  if (!isPostgres(db)) return;
  await sql`
    create constraint trigger tokens_data_version_insert after insert on personal_access_tokens
    deferrable initially deferred for each row execute function data_version_bump()`.execute(db);
}
