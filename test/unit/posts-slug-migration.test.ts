// Migration 2026_11_26_000001: a post's slug unique per locale instead of across the site. Run on
// a database holding posts made under the old rule (SQLite rebuilds the table, PostgreSQL swaps
// the constraint for an index): every row and id survives, the AUTOINCREMENT counter too, the
// post_counts triggers (and on PostgreSQL data_version's) still fire, and `down` makes slugs
// unique again — refused, changing nothing, while a slug names posts in several locales.
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { Migrator, sql } from 'kysely';
import pg from 'pg';
import { connect, type Db } from '../../src/db/connect.js';
import { isUniqueViolation } from '../../src/db/errors.js';
import { migrations } from '../../src/db/migrator.js';
import type { NewPost } from '../../src/db/types.js';
import { TEST_DATABASE_URL, migrateTo as migrateToName, onPostgres } from '../helpers.js';

const BEFORE = '2026_11_25_000001_add_account_security';
const THIS = '2026_11_26_000001_posts_slug_unique_per_locale';

/** An empty database, not migrated: SQLite in memory, or a new PostgreSQL schema. */
async function emptyDatabase(): Promise<{ db: Db; schema: string | undefined; drop(): Promise<void> }> {
  if (!onPostgres) {
    const db = connect('sqlite::memory:');
    return { db, schema: undefined, drop: () => db.close() };
  }
  const schema = `t_${randomBytes(6).toString('hex')}`;
  const admin = async (statement: string) => {
    const client = new pg.Client({ connectionString: TEST_DATABASE_URL });
    await client.connect();
    try {
      await client.query(statement);
    } finally {
      await client.end();
    }
  };
  await admin(`create schema ${schema}`);
  const db = connect(TEST_DATABASE_URL, { schema, poolSize: 2 });
  return {
    db,
    schema,
    drop: async () => {
      await db.close();
      await admin(`drop schema ${schema} cascade`);
    },
  };
}

describe('migration: post slugs unique per locale', () => {
  let database: Awaited<ReturnType<typeof emptyDatabase>>;
  let db: Db;
  let migrator: Migrator;
  let authorId: number;
  let deletedId: number;

  const now = () => new Date().toISOString();
  // No author unless given: the author is deleted half-way through.
  const post = (fields: Partial<NewPost>): NewPost => ({
    author_id: null,
    title: 'T',
    slug: `s-${randomBytes(4).toString('hex')}`,
    excerpt: '',
    body: 'b',
    locale: 'en',
    status: 'published',
    published_at: '2026-01-01T00:00:00.000Z',
    created_at: now(),
    updated_at: now(),
    ...fields,
  });
  const insert = async (fields: Partial<NewPost>) => (await db.kysely.insertInto('posts').values(post(fields)).returning('id').executeTakeFirstOrThrow()).id;
  const allPosts = () => db.kysely.selectFrom('posts').selectAll().orderBy('id').execute();
  const kept = async () => {
    const rows = await db.kysely.selectFrom('post_counts').selectAll().where('n', '!=', 0).execute();
    return Object.fromEntries(rows.map((r) => [`${r.status}/${r.locale}`, Number(r.n)]).sort());
  };
  const actual = async () => {
    const rows = await db.kysely
      .selectFrom('posts')
      .select(['status', 'locale', (eb) => eb.fn.countAll<number | string>().as('n')])
      .groupBy(['status', 'locale'])
      .execute();
    return Object.fromEntries(rows.map((r) => [`${r.status}/${r.locale}`, Number(r.n)]).sort());
  };
  /** The names of the indexes on posts, as the database lists them. */
  const indexes = async (): Promise<string[]> => {
    const rows = onPostgres
      ? (await sql<{ name: string }>`select indexname as name from pg_indexes where schemaname = current_schema() and tablename = 'posts'`.execute(db.kysely)).rows
      : (await sql<{ name: string }>`select name from sqlite_master where type = 'index' and tbl_name = 'posts'`.execute(db.kysely)).rows;
    return rows.map((row) => row.name).sort();
  };
  const migrateTo = (name: string) => migrateToName(migrator, name);
  const dataVersion = async () => Number((await sql<{ n: string }>`select n from data_version where id = 1`.execute(db.kysely)).rows[0]?.n);

  before(async () => {
    database = await emptyDatabase();
    db = database.db;
    migrator = new Migrator({ db: db.kysely, provider: { getMigrations: async () => migrations }, migrationTableSchema: database.schema });
    await migrateTo(BEFORE);
    authorId = (
      await db.kysely
        .insertInto('users')
        .values({ name: 'Author', email: 'author@example.com', password: 'x', email_verified_at: null, is_admin: 0, created_at: now(), updated_at: now() })
        .returning('id')
        .executeTakeFirstOrThrow()
    ).id;
    // Posts made under the old rule, in several statuses and locales; the newest is deleted so
    // that the highest id ever given is above the highest id left.
    await insert({ slug: 'hello', title: 'Hello', author_id: authorId });
    await insert({ slug: 'bonjour', locale: 'fr', title: 'Bonjour', author_id: authorId });
    await insert({ slug: 'draft-one', status: 'draft', published_at: null });
    await insert({ slug: 'old-news', status: 'archived', body: 'ünïcödé ✓', author_id: authorId });
    deletedId = await insert({ slug: 'gone', locale: 'fr' });
    await db.kysely.deleteFrom('posts').where('id', '=', deletedId).execute();
  });
  after(() => database.drop());

  it('refuses a second post with one slug before it (the old rule, which it replaces)', async () => {
    await assert.rejects(insert({ slug: 'hello', locale: 'fr' }), (error: unknown) => isUniqueViolation(error));
  });

  it('keeps every row, id and count, and the indexes of posts, with the new unique index instead of the old one', async () => {
    const rows = await allPosts();
    const counts = await kept();
    const before = await indexes();
    await migrateTo(THIS);
    assert.deepEqual(await allPosts(), rows);
    assert.equal(rows.length, 4);
    assert.deepEqual(await kept(), counts);
    assert.deepEqual(await kept(), await actual());
    const afterwards = await indexes();
    for (const name of ['posts_listing_index', 'posts_author_id_index', 'posts_pkey'].filter((n) => before.includes(n))) assert.ok(afterwards.includes(name), name);
    assert.ok(afterwards.includes('posts_slug_locale_unique'));
    assert.equal(afterwards.length, before.length, 'one unique index replaced by another, nothing else');
    if (!onPostgres) {
      assert.equal(db.sqlite?.pragma('foreign_keys', { simple: true }), 1, 'foreign keys are on again');
      assert.deepEqual(db.sqlite?.pragma('integrity_check'), [{ integrity_check: 'ok' }]);
    }
  });

  it('never gives again the id of a post deleted before it (the first insert after it)', async () => {
    assert.ok((await insert({ slug: 'fresh' })) > deletedId);
  });

  it('lets a translation share a slug, and still refuses one slug twice in a locale', async () => {
    await insert({ slug: 'hello', locale: 'fr', title: 'Salut' });
    await assert.rejects(insert({ slug: 'hello', locale: 'en' }), (error: unknown) => isUniqueViolation(error));
    await assert.rejects(
      db.kysely.updateTable('posts').set({ locale: 'en' }).where('slug', '=', 'hello').where('locale', '=', 'fr').execute(),
      (error: unknown) => isUniqueViolation(error),
    );
  });

  it('keeps post_counts right through inserts, status and locale changes and deletes', async () => {
    await insert({ slug: 'counted', locale: 'de', status: 'draft', published_at: null });
    await db.kysely.updateTable('posts').set({ status: 'published' }).where('slug', '=', 'counted').execute();
    await db.kysely.updateTable('posts').set({ locale: 'fr' }).where('slug', '=', 'old-news').execute();
    await db.kysely.deleteFrom('posts').where('slug', '=', 'draft-one').execute();
    assert.deepEqual(await kept(), await actual());
    assert.deepEqual(await kept(), { 'archived/fr': 1, 'published/de': 1, 'published/en': 2, 'published/fr': 2 });
  });

  it('keeps the author reference: a deleted author leaves the posts without one', async () => {
    await db.kysely.deleteFrom('users').where('id', '=', authorId).execute();
    const authors = await db.kysely.selectFrom('posts').select('author_id').distinct().execute();
    assert.deepEqual(authors, [{ author_id: null }]);
  });

  it('keeps moving data_version on every change to posts (PostgreSQL)', { skip: onPostgres ? false : 'data_version is PostgreSQL only' }, async () => {
    const start = await dataVersion();
    const id = await insert({ slug: 'versioned' });
    assert.ok((await dataVersion()) > start, 'insert');
    const afterInsert = await dataVersion();
    await db.kysely.updateTable('posts').set({ title: 'Renamed' }).where('id', '=', id).execute();
    assert.ok((await dataVersion()) > afterInsert, 'update');
    const afterUpdate = await dataVersion();
    await db.kysely.deleteFrom('posts').where('id', '=', id).execute();
    assert.ok((await dataVersion()) > afterUpdate, 'delete');
  });

  it('refuses to go down while a slug names posts in several locales, naming it and changing nothing', async () => {
    const rows = await allPosts();
    await assert.rejects(migrateTo(BEFORE), /cannot be unique across locales again.*\(hello\)/);
    assert.deepEqual(await allPosts(), rows);
    assert.ok((await indexes()).includes('posts_slug_locale_unique'));
    const applied = await migrator.getMigrations();
    assert.ok(applied.find((migration) => migration.name === THIS)?.executedAt, 'still applied');
  });

  it('goes down to one slug across the site once the translation is gone, and up again', async () => {
    await db.kysely.deleteFrom('posts').where('slug', '=', 'hello').where('locale', '=', 'fr').execute();
    const rows = await allPosts();
    await migrateTo(BEFORE);
    assert.deepEqual(await allPosts(), rows);
    assert.ok(!(await indexes()).includes('posts_slug_locale_unique'));
    await assert.rejects(insert({ slug: 'hello', locale: 'fr' }), (error: unknown) => isUniqueViolation(error));
    await insert({ slug: 'after-down', status: 'archived' });
    assert.deepEqual(await kept(), await actual(), 'the triggers survive a rebuild down as well');
    await migrateTo(THIS);
    await insert({ slug: 'hello', locale: 'fr' });
    assert.deepEqual(await kept(), await actual());
  });
});
