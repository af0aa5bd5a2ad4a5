// Server-side browser sessions, in the application database (SQLite or PostgreSQL).
import { timestamp, type AnyDb } from './helpers.js';

export async function up(db: AnyDb): Promise<void> {
  const ts = timestamp(db);
  await db.schema
    .createTable('sessions')
    .addColumn('id', 'varchar(128)', (c) => c.primaryKey())
    // Set while someone is logged in, so every session of a user can be ended (password reset).
    .addColumn('user_id', 'integer', (c) => c.references('users.id').onDelete('cascade'))
    .addColumn('admin_user_id', 'integer', (c) => c.references('users.id').onDelete('cascade'))
    .addColumn('payload', 'text', (c) => c.notNull())
    .addColumn('expires_at', ts, (c) => c.notNull())
    .addColumn('updated_at', ts, (c) => c.notNull())
    .execute();
  await db.schema.createIndex('sessions_user_id_index').on('sessions').column('user_id').execute();
  await db.schema.createIndex('sessions_admin_user_id_index').on('sessions').column('admin_user_id').execute();
  await db.schema.createIndex('sessions_expires_at_index').on('sessions').column('expires_at').execute();
}

export async function down(db: AnyDb): Promise<void> {
  await db.schema.dropTable('sessions').execute();
}
