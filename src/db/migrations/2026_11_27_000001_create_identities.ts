// Sign-in with OpenID Connect providers (issue 24 §3): the identities that link an account to a
// provider's subject, and accounts without a password (made through a provider). A subject is
// unique per provider (one account per identity); the link goes with its account.
//
// users.password becomes nullable. PostgreSQL drops the NOT NULL. SQLite cannot: users is rebuilt
// by SQLite's procedure (helpers.ts rebuildSqliteTable), keeping every id, the email index and
// the references of the eight tables that point at users.
import { isPostgres, rebuildSqliteTable, timestamp, withId, type AnyDb } from './helpers.js';

const PASSWORD_REQUIRED = '"password" varchar(255) not null';
const PASSWORD_OPTIONAL = '"password" varchar(255)';

export async function up(db: AnyDb): Promise<void> {
  const ts = timestamp(db);
  await withId(db, db.schema.createTable('identities'))
    .addColumn('user_id', 'integer', (c) => c.notNull().references('users.id').onDelete('cascade'))
    /** The provider's name in OIDC_PROVIDERS. */
    .addColumn('provider', 'varchar(64)', (c) => c.notNull())
    /** The ID token's `sub`: stable for the account at that provider, never reassigned. */
    .addColumn('subject', 'varchar(255)', (c) => c.notNull())
    /** The email the provider gave when linked (shown on /security), not a way to find the account. */
    .addColumn('email', 'varchar(255)')
    .addColumn('created_at', ts, (c) => c.notNull())
    .addColumn('last_used_at', ts)
    .addUniqueConstraint('identities_provider_subject_unique', ['provider', 'subject'])
    .execute();
  await db.schema.createIndex('identities_user_id_index').on('identities').column('user_id').execute();

  if (isPostgres(db)) await db.schema.alterTable('users').alterColumn('password', (c) => c.dropNotNull()).execute();
  else await rebuildSqliteTable(db, 'users', { replace: [PASSWORD_REQUIRED, PASSWORD_OPTIONAL] });
}

/** Drops the identities; refused while an account has no password (it could not sign in again). */
export async function down(db: AnyDb): Promise<void> {
  const passwordless = await db.selectFrom('users').select('email').where('password', 'is', null).orderBy('id').limit(5).execute();
  if (passwordless.length > 0) {
    const emails = passwordless.map((row: { email: string }) => row.email).join(', ');
    throw new Error(`users.password cannot be required again: these accounts have none (${emails}); set their passwords or delete them first`);
  }
  if (isPostgres(db)) await db.schema.alterTable('users').alterColumn('password', (c) => c.setNotNull()).execute();
  else await rebuildSqliteTable(db, 'users', { replace: [PASSWORD_OPTIONAL, PASSWORD_REQUIRED] });
  await db.schema.dropTable('identities').execute();
}
