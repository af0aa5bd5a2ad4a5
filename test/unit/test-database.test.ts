// The suite's databases are copies of a template migrated once (test/helpers.ts), not migrated
// one by one: this checks that a copy is the database the migrator makes, table for table,
// column for column, index, constraint, trigger and function, row for row. On PostgreSQL a
// schema is kept when its app is done and refilled for the next: that one is checked too.
import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';
import { sql } from 'kysely';
import { createTestDatabase, onPostgres, type TestDatabase } from '../helpers.js';
import { needsPostgres } from '../support/services.js';

/** Everything that makes up the schema and its rows, with the schema's own name taken out. */
async function describeDatabase(database: TestDatabase): Promise<unknown> {
  return timeless(await describeRaw(database));
}

/**
 * The migrations stamp the rows they write (the default settings) with the time they ran: a
 * copy carries the template's time. Every ISO time is therefore compared as a time, not by value.
 */
const timeless = (value: unknown): unknown => JSON.parse(JSON.stringify(value).replace(/\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z/g, '<time>')) as unknown;

async function describeRaw(database: TestDatabase): Promise<unknown> {
  const { kysely } = database.db;
  const rows = async (query: ReturnType<typeof sql>) => (await query.execute(kysely)).rows as Record<string, unknown>[];
  const anonymous = (value: unknown, schema: string) => JSON.parse(JSON.stringify(value).replaceAll(schema, '<schema>')) as unknown;
  if (database.db.dialect === 'sqlite') {
    const objects = await rows(sql`select type, name, tbl_name, sql from sqlite_master order by type, name`);
    const tables = objects.filter((each) => each.type === 'table').map((each) => String(each.name));
    const contents = Object.fromEntries(await Promise.all(tables.map(async (table) => [table, await rows(sql`select * from ${sql.table(table)} order by 1`)])));
    const pragmas = { user_version: await rows(sql`pragma user_version`), foreign_keys: await rows(sql`pragma foreign_keys`) };
    return { objects, contents, pragmas };
  }
  const [{ schema } = { schema: '' }] = (await rows(sql`select current_schema() as schema`)) as { schema: string }[];
  const columns = await rows(sql`select table_name, column_name, data_type, column_default, is_nullable, ordinal_position from information_schema.columns where table_schema = current_schema() order by table_name, ordinal_position`);
  const indexes = await rows(sql`select tablename, indexname, indexdef from pg_indexes where schemaname = current_schema() order by indexname`);
  const constraints = await rows(sql`select conrelid::regclass::text as tbl, conname, pg_get_constraintdef(oid) as def from pg_constraint where connamespace = current_schema()::regnamespace order by conname`);
  // A trigger's condition comes back from pg_dump's text with a chain of ORs flat, from the
  // migration's with each OR nested: the same condition, printed with other parentheses.
  const flat = (each: Record<string, unknown>) => ({ ...each, def: String(each.def).replace(/[()]/g, '') });
  const triggers = (await rows(sql`select tgrelid::regclass::text as tbl, tgname, pg_get_triggerdef(oid) as def from pg_trigger where not tgisinternal and tgrelid::regclass::text in (select table_name from information_schema.tables where table_schema = current_schema()) order by tgname`)).map(flat);
  const functions = await rows(sql`select proname, pg_get_functiondef(oid) as def from pg_proc where pronamespace = current_schema()::regnamespace order by proname`);
  const sequences = await rows(sql`select sequencename, last_value, start_value, increment_by from pg_sequences where schemaname = current_schema() order by sequencename`);
  const tables = [...new Set(columns.map((each) => String(each.table_name)))];
  const contents = Object.fromEntries(await Promise.all(tables.map(async (table) => [table, await rows(sql`select * from ${sql.table(table)} order by 1`)])));
  return anonymous({ columns, indexes, constraints, triggers, functions, sequences, contents }, schema);
}

describe(`the suite's migrated databases (${onPostgres ? 'PostgreSQL' : 'SQLite'})`, () => {
  const opened: TestDatabase[] = [];
  after(() => Promise.all(opened.map((each) => each.drop())));
  const open = async (options: Parameters<typeof createTestDatabase>[0]) => {
    const database = await createTestDatabase(options);
    opened.push(database);
    return database;
  };

  it('a copy of the template is the database the migrator makes: schema, indexes, triggers and rows', async () => {
    const fresh = await open({ migrated: 'migrator' });
    const copy = await open({});
    assert.equal(fresh.origin, 'migrator');
    // Made from the template, not migrated once more because the template could not be used.
    assert.notEqual(copy.origin, 'migrator');
    const migrated = await describeDatabase(fresh);
    const copied = await describeDatabase(copy);
    assert.deepEqual(copied, migrated);
    // The description is not empty: it holds the tables of the first migration and their rows.
    assert.match(JSON.stringify(migrated), /personal_access_tokens/);
    assert.match(JSON.stringify(migrated), /kysely_migration/);
  });

  it('a copy is a database of its own: a row written in one is not in the next copy', async () => {
    const first = await open({});
    await sql`insert into settings (key, value, updated_at) values ('copy_check', '"1"', '2026-01-01T00:00:00.000Z')`.execute(first.db.kysely);
    const second = await open({});
    const found = await sql`select key from settings where key = 'copy_check'`.execute(second.db.kysely);
    assert.equal(found.rows.length, 0);
  });

  const schemaOf = async (database: TestDatabase) => (await sql<{ schema: string }>`select current_schema() as schema`.execute(database.db.kysely)).rows[0]?.schema ?? '';
  const schemaExists = async (database: TestDatabase, name: string) =>
    (await sql<{ found: number }>`select count(*)::int as found from pg_namespace where nspname = ${name}`.execute(database.db.kysely)).rows[0]?.found === 1;

  it('a schema kept after its app is done comes back to the next app as the migrator makes it, without the rows and counters of the last', { skip: needsPostgres }, async () => {
    const first = await createTestDatabase();
    const name = await schemaOf(first);
    const { kysely } = first.db;
    // Rows in tables with foreign keys, sequences moved, the triggers' counters moved.
    await sql`insert into users (name, email, password, created_at, updated_at) values ('Kept', 'kept@example.com', null, now(), now())`.execute(kysely);
    await sql`insert into posts (author_id, title, slug, body, status, locale, published_at, created_at, updated_at) select id, 'T', 't', 'B', 'published', 'en', now(), now(), now() from users`.execute(kysely);
    await sql`update settings set value = '"Renamed"' where key = 'site_name'`.execute(kysely);
    await first.drop();

    const second = await open({});
    assert.equal(second.origin, 'kept');
    assert.equal(await schemaOf(second), name, 'the same schema, refilled');
    assert.deepEqual(await describeDatabase(second), await describeDatabase(await open({ migrated: 'migrator' })));
  });

  it('a schema whose structure its test changed is dropped, not kept', { skip: needsPostgres }, async () => {
    const first = await createTestDatabase();
    const name = await schemaOf(first);
    await sql`alter table users add column nickname text`.execute(first.db.kysely);
    await first.drop();
    const second = await open({});
    assert.notEqual(second.origin, 'kept');
    assert.notEqual(await schemaOf(second), name);
    assert.equal(await schemaExists(second, name), false, 'the changed schema is gone');
    assert.equal((await sql<{ found: number }>`select count(*)::int as found from information_schema.columns where table_schema = current_schema() and column_name = 'nickname'`.execute(second.db.kysely)).rows[0]?.found, 0);
  });

  it('a file database (for a second connection) is a copy too, and takes a write from the other connection', async () => {
    if (onPostgres) return;
    const database = await open({ file: true });
    const other = database.connectAgain();
    await sql`insert into settings (key, value, updated_at) values ('other', '"2"', '2026-01-01T00:00:00.000Z')`.execute(other.kysely);
    const found = await sql<{ key: string }>`select key from settings where key = 'other'`.execute(database.db.kysely);
    assert.equal(found.rows.length, 1);
    assert.equal((await sql<{ journal_mode: string }>`pragma journal_mode`.execute(database.db.kysely)).rows[0]?.journal_mode, 'wal');
  });
});
