// Column helpers that keep each migration portable between SQLite and PostgreSQL.
import { PostgresAdapter, sql, type CreateTableBuilder, type Kysely } from 'kysely';

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- migrations are frozen in time
export type AnyDb = Kysely<any>;

export function isPostgres(db: AnyDb): boolean {
  return db.getExecutor().adapter instanceof PostgresAdapter;
}

/** An auto-increment integer primary key called `id`. */
export function withId<T extends string>(db: AnyDb, table: CreateTableBuilder<T, never>): CreateTableBuilder<T, 'id'> {
  return isPostgres(db)
    ? table.addColumn('id', 'serial', (c) => c.primaryKey())
    : table.addColumn('id', 'integer', (c) => c.primaryKey().autoIncrement());
}

/** The column type for a point in time: timestamptz on PostgreSQL, ISO-8601 text on SQLite. */
export function timestamp(db: AnyDb): 'timestamptz' | 'text' {
  return isPostgres(db) ? 'timestamptz' : 'text';
}

/** One change to a SQLite table's own SQL, for rebuildSqliteTable. */
export type SqliteRebuild = {
  /** Text to find exactly once in the table's CREATE statement, and what it becomes. */
  replace: [from: string, to: string];
  /** Indexes of the table not to re-create. */
  dropIndexes?: readonly string[];
  /** Statements run on the new table once its indexes and triggers are back. */
  after?: readonly string[];
};

/**
 * SQLite's twelve steps for a change ALTER TABLE cannot make
 * (https://www.sqlite.org/lang_altertable.html, "Making Other Kinds Of Table Schema Changes"),
 * for any table, referenced or not. The migrator runs SQLite migrations outside a transaction, so
 * this opens its own: nothing changes unless everything did. Every row keeps its id, the
 * AUTOINCREMENT counter is kept (no id is given twice), the table's indexes and triggers are read
 * first and re-created exactly, and the tables that reference it keep their foreign keys (they
 * name the table, which is back under its name before they are checked).
 */
export async function rebuildSqliteTable(db: AnyDb, name: string, change: SqliteRebuild): Promise<void> {
  const [from, to] = change.replace;
  const table = (await sql<{ sql: string }>`select sql from sqlite_master where type = 'table' and name = ${name}`.execute(db)).rows[0]?.sql ?? '';
  const head = `CREATE TABLE "${name}" (`;
  if (!table.startsWith(head) || table.split(from).length !== 2) {
    throw new Error(`the ${name} table is not as the migrations left it (looked for ${from})`);
  }
  const rebuilt = `${name}_rebuilt`;
  const created = `CREATE TABLE "${rebuilt}" (${table.slice(head.length).replace(from, to)}`;

  // 1. Foreign keys off while the table is away (dropping a parent with them on would delete or
  // refuse its children): the pragma is a no-op inside a transaction, so it is set before it.
  const foreignKeys = Number((await sql<{ foreign_keys: number }>`pragma foreign_keys`.execute(db)).rows[0]?.foreign_keys ?? 0) === 1;
  if (foreignKeys) await sql`pragma foreign_keys = off`.execute(db);
  try {
    // 2. One transaction, taking the write lock at once.
    await sql`begin immediate`.execute(db);
    try {
      // 3. The table's own indexes and triggers (automatic indexes have no SQL), in their order.
      const schema = await sql<{ type: string; name: string; sql: string }>`
        select type, name, sql from sqlite_master
        where tbl_name = ${name} and type in ('index', 'trigger') and sql is not null order by rowid`.execute(db);
      const sequence = (await sql<{ seq: number }>`select seq from sqlite_sequence where name = ${name}`.execute(db)).rows[0]?.seq;
      // 4–7. The new table, every row with its id, the old one gone, the new one in its place.
      await sql.raw(created).execute(db);
      await sql`insert into ${sql.id(rebuilt)} select * from ${sql.id(name)}`.execute(db);
      await sql`drop table ${sql.id(name)}`.execute(db);
      await sql`alter table ${sql.id(rebuilt)} rename to ${sql.id(name)}`.execute(db);
      // 8. The indexes and triggers again, exactly as they were.
      for (const entry of schema.rows) {
        if (entry.type === 'index' && change.dropIndexes?.includes(entry.name) === true) continue;
        await sql.raw(entry.sql).execute(db);
      }
      for (const statement of change.after ?? []) await sql.raw(statement).execute(db);
      if (sequence !== undefined) {
        const now = (await sql<{ seq: number }>`select seq from sqlite_sequence where name = ${name}`.execute(db)).rows[0]?.seq;
        if (now === undefined) await sql`insert into sqlite_sequence (name, seq) values (${name}, ${sequence})`.execute(db);
        else if (now < sequence) await sql`update sqlite_sequence set seq = ${sequence} where name = ${name}`.execute(db);
      }
      // 10. No broken reference from or to the table.
      const broken = await sql<{ table: string; parent: string }>`pragma foreign_key_check`.execute(db);
      if (broken.rows.some((row) => row.table === name || row.parent === name)) throw new Error(`rebuilding ${name} would break foreign keys`);
      await sql`commit`.execute(db);
    } catch (error) {
      await sql`rollback`.execute(db);
      throw error;
    }
  } finally {
    if (foreignKeys) await sql`pragma foreign_keys = on`.execute(db);
  }
}
