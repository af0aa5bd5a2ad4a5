// The panel's audit log: one row per administrator action (who, what, when).
import { timestamp, withId, type AnyDb } from './helpers.js';

export async function up(db: AnyDb): Promise<void> {
  const ts = timestamp(db);
  await withId(db, db.schema.createTable('audit_logs'))
    // The actor's id goes null when the account is deleted; the name and email kept beside it
    // still say who it was.
    .addColumn('user_id', 'integer', (c) => c.references('users.id').onDelete('set null'))
    .addColumn('actor_name', 'varchar(255)', (c) => c.notNull())
    .addColumn('actor_email', 'varchar(255)', (c) => c.notNull())
    .addColumn('action', 'varchar(64)', (c) => c.notNull())
    .addColumn('subject_type', 'varchar(32)', (c) => c.notNull())
    .addColumn('subject_id', 'varchar(128)')
    // What the subject was called at the time (an email, a title, a key): it may be gone since.
    .addColumn('subject_label', 'varchar(255)', (c) => c.notNull())
    /** JSON object: the names of the fields that changed, never their secret values. */
    .addColumn('details', 'text', (c) => c.notNull())
    .addColumn('ip', 'varchar(45)')
    .addColumn('created_at', ts, (c) => c.notNull())
    .execute();
  await db.schema.createIndex('audit_logs_created_at_index').on('audit_logs').columns(['created_at', 'id']).execute();
  await db.schema.createIndex('audit_logs_user_id_index').on('audit_logs').column('user_id').execute();
}

export async function down(db: AnyDb): Promise<void> {
  await db.schema.dropTable('audit_logs').execute();
}
