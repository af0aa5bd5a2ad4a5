// PostgreSQL only: a change to the settings moves the data_version counter too (migration
// 2026_11_24_000001 and its data_version_bump(), once per transaction, at the commit). The site
// settings every page shows are then kept in memory on PostgreSQL as they are on SQLite
// (src/perf/kept-reads.ts keptSiteValues): a page costs a share of the one look at the counter
// that the requests of an event-loop turn send together, instead of a query of its own for the
// settings rows (issue 26).
import { sql } from 'kysely';
import { isPostgres, type AnyDb } from './helpers.js';

export async function up(db: AnyDb): Promise<void> {
  if (!isPostgres(db)) return;
  await sql`
    create constraint trigger settings_data_version after insert or update or delete on settings
    deferrable initially deferred for each row execute function data_version_bump()`.execute(db);
}

export async function down(db: AnyDb): Promise<void> {
  if (!isPostgres(db)) return;
  await sql`drop trigger settings_data_version on settings`.execute(db);
}
