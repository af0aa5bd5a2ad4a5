// Password reset tokens, Laravel's shape: one row per address (a new request replaces the old
// token), the token stored only as its SHA-256.
import { timestamp, type AnyDb } from './helpers.js';

export async function up(db: AnyDb): Promise<void> {
  await db.schema
    .createTable('password_reset_tokens')
    // Lower-cased, so that one address has one row whatever case it was typed in.
    .addColumn('email', 'varchar(255)', (c) => c.primaryKey())
    .addColumn('token', 'varchar(64)', (c) => c.notNull())
    .addColumn('created_at', timestamp(db), (c) => c.notNull())
    .execute();
}

export async function down(db: AnyDb): Promise<void> {
  await db.schema.dropTable('password_reset_tokens').execute();
}
