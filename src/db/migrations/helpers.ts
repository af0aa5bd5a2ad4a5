// Column helpers that keep each migration portable between SQLite and PostgreSQL.
import { PostgresAdapter, type CreateTableBuilder, type Kysely } from 'kysely';

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
