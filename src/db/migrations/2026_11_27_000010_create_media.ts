// Images uploaded in the panel (issue 27 §3). The bytes live in the database, so every instance
// serves every image and a backup holds them: no shared directory to mount or to copy. A row is
// the image as stored (re-encoded, its metadata gone), addressed by the SHA-256 of those bytes.
import { isPostgres, timestamp, withId, type AnyDb } from './helpers.js';

export async function up(db: AnyDb): Promise<void> {
  await withId(db, db.schema.createTable('media'))
    /** SHA-256 hex of `data`: the file's name in its URL, so a URL never changes meaning. */
    .addColumn('hash', 'varchar(64)', (c) => c.notNull().unique())
    /** png, jpeg, webp, gif or avif: what the bytes are, never what the upload was called. */
    .addColumn('type', 'varchar(8)', (c) => c.notNull())
    /** The uploaded file's name, shown in the library only. */
    .addColumn('name', 'varchar(255)', (c) => c.notNull())
    .addColumn('size', 'integer', (c) => c.notNull())
    .addColumn('width', 'integer', (c) => c.notNull())
    .addColumn('height', 'integer', (c) => c.notNull())
    .addColumn('data', isPostgres(db) ? 'bytea' : 'blob', (c) => c.notNull())
    .addColumn('uploaded_by', 'integer', (c) => c.references('users.id').onDelete('set null'))
    .addColumn('created_at', timestamp(db), (c) => c.notNull())
    .execute();
  await db.schema.createIndex('media_created_at_index').on('media').column('created_at').execute();
}

export async function down(db: AnyDb): Promise<void> {
  await db.schema.dropTable('media').execute();
}
