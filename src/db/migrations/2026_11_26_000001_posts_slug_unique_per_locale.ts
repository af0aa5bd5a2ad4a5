// A post's slug is unique per locale, no longer across the site (issue 18): a translation keeps
// its original's slug, so that /blog/{slug} and /blog/{slug}?locale=fr are one post in two
// languages and the blog can link them as hreflang alternates. The unique constraint of the
// posts.slug column becomes a unique index on (slug, locale): the same rule as "(locale, slug)",
// with the slug first so that the reads by slug alone (a post and its translations) use it as
// they used the old constraint's index.
//
// PostgreSQL drops the column's constraint, found by its name in the catalogue, and creates the
// index; the triggers on posts (post_counts, data_version) are not touched. SQLite cannot drop a
// column's UNIQUE: the table is rebuilt by SQLite's documented procedure
// (https://www.sqlite.org/lang_altertable.html, "Making Other Kinds Of Table Schema Changes"):
// its own indexes and triggers are read first and re-created exactly, every row keeps its id, and
// the AUTOINCREMENT counter is kept, so the id of a deleted post is never given again.
import { sql } from 'kysely';
import { isPostgres, type AnyDb } from './helpers.js';

const INDEX = 'posts_slug_locale_unique';
// The column as create_core_tables wrote it on SQLite, with and without its UNIQUE.
const SLUG_UNIQUE = '"slug" varchar(255) not null unique';
const SLUG_PLAIN = '"slug" varchar(255) not null';
// The name PostgreSQL gave the column's constraint, given back by `down`.
const PG_CONSTRAINT = 'posts_slug_key';

export async function up(db: AnyDb): Promise<void> {
  if (isPostgres(db)) {
    const found = await sql<{ name: string }>`
      select c.conname as name from pg_constraint c
      join pg_attribute a on a.attrelid = c.conrelid and a.attnum = c.conkey[1]
      where c.conrelid = 'posts'::regclass and c.contype = 'u' and cardinality(c.conkey) = 1 and a.attname = 'slug'`.execute(db);
    const name = found.rows[0]?.name;
    if (name === undefined) throw new Error('posts.slug has no unique constraint to replace: the posts table is not as the migrations left it');
    await sql`alter table posts drop constraint ${sql.id(name)}`.execute(db);
    await sql`create unique index ${sql.id(INDEX)} on posts (slug, locale)`.execute(db);
    return;
  }
  await rebuildSqlitePosts(db, { column: [SLUG_UNIQUE, SLUG_PLAIN], dropIndex: null, createIndex: `create unique index "${INDEX}" on "posts" ("slug", "locale")` });
}

/** Makes slugs unique across the site again; refused while a slug names posts in several locales. */
export async function down(db: AnyDb): Promise<void> {
  const shared = await sql<{ slug: string }>`select slug from posts group by slug having count(*) > 1 order by slug limit 5`.execute(db);
  if (shared.rows.length > 0) {
    const slugs = shared.rows.map((row) => row.slug).join(', ');
    throw new Error(`posts.slug cannot be unique across locales again: these slugs name posts in several locales (${slugs}); rename or delete the translations first`);
  }
  if (isPostgres(db)) {
    await sql`drop index ${sql.id(INDEX)}`.execute(db);
    await sql`alter table posts add constraint ${sql.id(PG_CONSTRAINT)} unique (slug)`.execute(db);
    return;
  }
  await rebuildSqlitePosts(db, { column: [SLUG_PLAIN, SLUG_UNIQUE], dropIndex: INDEX, createIndex: null });
}

type Rebuild = {
  /** The column definition to find in the table's SQL, and what it becomes. */
  column: [from: string, to: string];
  /** An index of posts not to re-create. */
  dropIndex: string | null;
  /** A statement creating an index on the new table. */
  createIndex: string | null;
};

/**
 * SQLite's twelve steps for a change ALTER TABLE cannot make. The migrator runs SQLite
 * migrations outside a transaction (SQLite's DDL is transactional, but Kysely does not wrap it),
 * so this one opens its own: nothing changes unless everything did.
 */
async function rebuildSqlitePosts(db: AnyDb, change: Rebuild): Promise<void> {
  const [from, to] = change.column;
  const table = (await sql<{ sql: string }>`select sql from sqlite_master where type = 'table' and name = 'posts'`.execute(db)).rows[0]?.sql ?? '';
  const head = 'CREATE TABLE "posts" (';
  if (!table.startsWith(head) || table.split(from).length !== 2) {
    throw new Error(`the posts table is not as the migrations left it (looked for ${from})`);
  }
  const created = `CREATE TABLE "posts_rebuilt" (${table.slice(head.length).replace(from, to)}`;

  // 1. Foreign keys off while the table is away: the pragma is a no-op inside a transaction, so
  // it is set before it and restored after (nothing references posts today; a later table may).
  const foreignKeys = Number((await sql<{ foreign_keys: number }>`pragma foreign_keys`.execute(db)).rows[0]?.foreign_keys ?? 0) === 1;
  if (foreignKeys) await sql`pragma foreign_keys = off`.execute(db);
  try {
    // 2. One transaction, taking the write lock at once.
    await sql`begin immediate`.execute(db);
    try {
      // 3. The table's own indexes and triggers (an automatic index, such as the UNIQUE's, has
      // no SQL: it comes with the table that declares it), in the order they were made.
      const schema = await sql<{ type: string; name: string; sql: string }>`
        select type, name, sql from sqlite_master
        where tbl_name = 'posts' and type in ('index', 'trigger') and sql is not null order by rowid`.execute(db);
      const sequence = (await sql<{ seq: number }>`select seq from sqlite_sequence where name = 'posts'`.execute(db)).rows[0]?.seq;
      // 4–7. The new table, every row with its id, the old table gone, the new one in its place.
      await sql.raw(created).execute(db);
      // Same columns in the same order by construction: the table's own SQL with one column changed.
      await sql`insert into posts_rebuilt select * from posts`.execute(db);
      await sql`drop table posts`.execute(db);
      await sql`alter table posts_rebuilt rename to posts`.execute(db);
      // 8. The indexes and triggers again, exactly as they were (post_counts' among them).
      for (const entry of schema.rows) {
        if (entry.type === 'index' && entry.name === change.dropIndex) continue;
        await sql.raw(entry.sql).execute(db);
      }
      if (change.createIndex !== null) await sql.raw(change.createIndex).execute(db);
      // AUTOINCREMENT's promise: no id is given twice, even one whose post was deleted.
      if (sequence !== undefined) {
        const now = (await sql<{ seq: number }>`select seq from sqlite_sequence where name = 'posts'`.execute(db)).rows[0]?.seq;
        if (now === undefined) await sql`insert into sqlite_sequence (name, seq) values ('posts', ${sequence})`.execute(db);
        else if (now < sequence) await sql`update sqlite_sequence set seq = ${sequence} where name = 'posts'`.execute(db);
      }
      // 10. The rebuild may leave no broken reference from or to posts.
      const broken = await sql<{ table: string; parent: string }>`pragma foreign_key_check`.execute(db);
      if (broken.rows.some((row) => row.table === 'posts' || row.parent === 'posts')) throw new Error('rebuilding posts would break foreign keys');
      // 11.
      await sql`commit`.execute(db);
    } catch (error) {
      await sql`rollback`.execute(db);
      throw error;
    }
  } finally {
    // 12.
    if (foreignKeys) await sql`pragma foreign_keys = on`.execute(db);
  }
}
