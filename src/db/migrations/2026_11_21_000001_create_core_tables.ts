// Users, personal access tokens, posts and settings: the tables of the JSON API.
import { sql } from 'kysely';
import { timestamp, withId, type AnyDb } from './helpers.js';

export async function up(db: AnyDb): Promise<void> {
  const ts = timestamp(db);

  await withId(db, db.schema.createTable('users'))
    .addColumn('name', 'varchar(255)', (c) => c.notNull())
    .addColumn('email', 'varchar(255)', (c) => c.notNull())
    .addColumn('password', 'varchar(255)', (c) => c.notNull())
    .addColumn('email_verified_at', ts)
    .addColumn('is_admin', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('remember_token', 'varchar(100)')
    .addColumn('locale', 'varchar(16)')
    .addColumn('created_at', ts, (c) => c.notNull())
    .addColumn('updated_at', ts, (c) => c.notNull())
    .execute();
  // Emails are unique whatever their case: the index is on lower(email), and lookups use it.
  await db.schema.createIndex('users_email_unique').on('users').unique().expression(sql`lower(email)`).execute();

  await withId(db, db.schema.createTable('personal_access_tokens'))
    .addColumn('user_id', 'integer', (c) => c.notNull().references('users.id').onDelete('cascade'))
    .addColumn('name', 'varchar(255)', (c) => c.notNull())
    .addColumn('token', 'varchar(64)', (c) => c.notNull().unique())
    .addColumn('abilities', 'text', (c) => c.notNull())
    .addColumn('last_used_at', ts)
    .addColumn('expires_at', ts)
    .addColumn('created_at', ts, (c) => c.notNull())
    .addColumn('updated_at', ts, (c) => c.notNull())
    .execute();
  await db.schema.createIndex('personal_access_tokens_user_id_index').on('personal_access_tokens').column('user_id').execute();
  await db.schema.createIndex('personal_access_tokens_expires_at_index').on('personal_access_tokens').column('expires_at').execute();

  await withId(db, db.schema.createTable('posts'))
    .addColumn('author_id', 'integer', (c) => c.references('users.id').onDelete('set null'))
    .addColumn('title', 'varchar(255)', (c) => c.notNull())
    .addColumn('slug', 'varchar(255)', (c) => c.notNull().unique())
    .addColumn('excerpt', 'text', (c) => c.notNull().defaultTo(''))
    .addColumn('body', 'text', (c) => c.notNull().defaultTo(''))
    .addColumn('locale', 'varchar(16)', (c) => c.notNull())
    .addColumn('status', 'varchar(16)', (c) => c.notNull())
    .addColumn('published_at', ts)
    .addColumn('created_at', ts, (c) => c.notNull())
    .addColumn('updated_at', ts, (c) => c.notNull())
    .execute();
  // Fits the public list: equality on status and locale, then ordered by published_at, id.
  await db.schema
    .createIndex('posts_listing_index')
    .on('posts')
    .columns(['status', 'locale', 'published_at', 'id'])
    .execute();
  await db.schema.createIndex('posts_author_id_index').on('posts').column('author_id').execute();

  await db.schema
    .createTable('settings')
    .addColumn('key', 'varchar(100)', (c) => c.primaryKey())
    .addColumn('value', 'text', (c) => c.notNull())
    .addColumn('is_public', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('updated_at', ts, (c) => c.notNull())
    .execute();

  // The public settings GET /api/settings promises, so a fresh database answers it.
  const now = new Date().toISOString();
  await db
    .insertInto('settings')
    .values([
      { key: 'site_name', value: JSON.stringify('Tessera'), is_public: 1, updated_at: now },
      { key: 'site_description', value: JSON.stringify('Accounts, tokens and posts.'), is_public: 1, updated_at: now },
      { key: 'default_locale', value: JSON.stringify('en'), is_public: 1, updated_at: now },
      { key: 'locales', value: JSON.stringify(['en', 'fr']), is_public: 1, updated_at: now },
    ])
    .execute();
}

export async function down(db: AnyDb): Promise<void> {
  for (const table of ['settings', 'posts', 'personal_access_tokens', 'users']) {
    await db.schema.dropTable(table).execute();
  }
}
