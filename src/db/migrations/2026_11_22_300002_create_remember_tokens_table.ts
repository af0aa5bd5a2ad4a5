// "Remember me" tokens, one row per device: logging out on one device deletes that row only,
// unlike Laravel's single users.remember_token column, which logs every device out.
import { timestamp, withId, type AnyDb } from './helpers.js';

export async function up(db: AnyDb): Promise<void> {
  const ts = timestamp(db);
  await withId(db, db.schema.createTable('remember_tokens'))
    .addColumn('user_id', 'integer', (c) => c.notNull().references('users.id').onDelete('cascade'))
    // The lookup half of the cookie (not secret); the validator half is stored as its SHA-256.
    .addColumn('selector', 'varchar(32)', (c) => c.notNull().unique())
    .addColumn('validator_hash', 'varchar(64)', (c) => c.notNull())
    .addColumn('expires_at', ts, (c) => c.notNull())
    .addColumn('last_used_at', ts)
    .addColumn('created_at', ts, (c) => c.notNull())
    .execute();
  await db.schema.createIndex('remember_tokens_user_id_index').on('remember_tokens').column('user_id').execute();
  await db.schema.createIndex('remember_tokens_expires_at_index').on('remember_tokens').column('expires_at').execute();
}

export async function down(db: AnyDb): Promise<void> {
  await db.schema.dropTable('remember_tokens').execute();
}
