// Applies the migrations in src/db/migrations. The list is static (not read from disk) so it
// works the same from src/ under tsx and from dist/.
import { Migrator, sql, type Migration, type MigrationResultSet } from 'kysely';
import type { Db } from './connect.js';
import * as coreTables from './migrations/2026_11_21_000001_create_core_tables.js';
import * as sessionsTable from './migrations/2026_11_21_000002_create_sessions_table.js';
import * as auditLogsTable from './migrations/2026_11_22_000401_create_audit_logs_table.js';
import * as passwordResetTokensTable from './migrations/2026_11_22_300001_create_password_reset_tokens_table.js';
import * as rememberTokensTable from './migrations/2026_11_22_300002_create_remember_tokens_table.js';
import * as rateLimitsTable from './migrations/2026_11_22_600001_create_rate_limits_table.js';
import * as postCountsTable from './migrations/2026_11_22_700001_create_post_counts_table.js';
import * as sessionsCreatedAt from './migrations/2026_11_23_000001_add_created_at_to_sessions.js';
import * as dataVersion from './migrations/2026_11_24_000001_create_data_version.js';
import * as accountSecurity from './migrations/2026_11_25_000001_add_account_security.js';
import * as postsSlugPerLocale from './migrations/2026_11_26_000001_posts_slug_unique_per_locale.js';
import * as identities from './migrations/2026_11_27_000001_create_identities.js';
import * as adminListSortIndexes from './migrations/2026_11_27_000002_admin_list_sort_indexes.js';
import * as settingsDataVersion from './migrations/2026_11_27_000003_settings_data_version.js';
import * as media from './migrations/2026_11_27_000010_create_media.js';
import * as auditLogsActionIndex from './migrations/2026_11_27_000013_audit_logs_action_index.js';
import * as sessionVersion from './migrations/2026_11_29_000001_session_version.js';
import * as keptPagesCounters from './migrations/2026_11_30_000001_kept_pages_counters.js';
import * as tokenIssuedTokenVersionOnly from './migrations/2026_11_30_000002_token_issued_token_version_only.js';

export const migrations: Record<string, Migration> = {
  '2026_11_21_000001_create_core_tables': coreTables,
  '2026_11_21_000002_create_sessions_table': sessionsTable,
  '2026_11_22_000401_create_audit_logs_table': auditLogsTable,
  '2026_11_22_300001_create_password_reset_tokens_table': passwordResetTokensTable,
  '2026_11_22_300002_create_remember_tokens_table': rememberTokensTable,
  '2026_11_22_600001_create_rate_limits_table': rateLimitsTable,
  '2026_11_22_700001_create_post_counts_table': postCountsTable,
  '2026_11_23_000001_add_created_at_to_sessions': sessionsCreatedAt,
  '2026_11_24_000001_create_data_version': dataVersion,
  '2026_11_25_000001_add_account_security': accountSecurity,
  '2026_11_26_000001_posts_slug_unique_per_locale': postsSlugPerLocale,
  '2026_11_27_000001_create_identities': identities,
  '2026_11_27_000002_admin_list_sort_indexes': adminListSortIndexes,
  '2026_11_27_000003_settings_data_version': settingsDataVersion,
  '2026_11_27_000010_create_media': media,
  '2026_11_27_000013_audit_logs_action_index': auditLogsActionIndex,
  '2026_11_29_000001_session_version': sessionVersion,
  '2026_11_30_000001_kept_pages_counters': keptPagesCounters,
  '2026_11_30_000002_token_issued_token_version_only': tokenIssuedTokenVersionOnly,
};

// Kysely finds its own tables by listing every table of the database (pg_get_serial_sequence and
// has_schema_privilege on each); a schema dropped by another app at that moment (test runs drop
// theirs) fails the listing with one of these (3F000: schema does not exist). Nothing is applied
// before that listing and PostgreSQL migrations run in one transaction, so trying again is safe.
const CATALOG_RACE = new Set(['3F000', '42703', '42P01', 'XX000']);
const ATTEMPTS = 5;

/** Applies every pending migration; throws on the first failure. */
export async function migrateToLatest(db: Db): Promise<string[]> {
  return retryingCatalogRace(() => migrateOnce(db));
}

/** Runs a migration step again, up to ATTEMPTS times, while it fails on a CATALOG_RACE code. */
export async function retryingCatalogRace<T>(step: () => Promise<T>): Promise<T> {
  for (let attempt = 1; ; attempt += 1) {
    try {
      return await step();
    } catch (error) {
      const code = (error as { code?: unknown } | null)?.code;
      if (attempt >= ATTEMPTS || typeof code !== 'string' || !CATALOG_RACE.has(code)) throw error;
    }
  }
}

async function migrateOnce(db: Db): Promise<string[]> {
  // Kysely looks for its own tables in every schema of a PostgreSQL database: a
  // kysely_migration_lock in another schema (another app, a concurrent test run) would make it
  // skip creating ours. Naming the schema in use keeps the lookup to it.
  const schema =
    db.dialect === 'postgres' ? (await sql<{ name: string }>`select current_schema() as name`.execute(db.kysely)).rows[0]?.name : undefined;
  const migrator = new Migrator({ db: db.kysely, provider: { getMigrations: async () => migrations }, migrationTableSchema: schema });
  const result: MigrationResultSet = await migrator.migrateToLatest();
  if (result.error !== undefined) throw result.error;
  return (result.results ?? []).filter((r) => r.status === 'Success').map((r) => r.migrationName);
}
