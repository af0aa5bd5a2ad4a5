// Giving disk space back after large deletes. SQLite in WAL mode leaves its -wal file at the
// largest size it ever reached (a prune of 100,000 tokens left 59 MB there while the service
// ran) and its database file at its largest too: freed pages are reused, never returned.
// PostgreSQL's autovacuum makes dead rows' space reusable by itself.
import { statSync } from 'node:fs';
import { sql } from 'kysely';
import type { Db } from './connect.js';
import type { Database } from './types.js';

/** Bytes on disk: the SQLite file with its WAL, or a PostgreSQL table with its indexes and TOAST. */
export type SpaceUse = { before: number; after: number };

/** The SQLite file's path; null for an in-memory database or PostgreSQL. */
function sqliteFile(db: Db): string | null {
  const name = db.sqlite?.name;
  return name === undefined || name === ':memory:' || name === '' ? null : name;
}

function sizeOf(path: string): number {
  try {
    return statSync(path).size;
  } catch {
    return 0;
  }
}

/** The database file and its WAL, in bytes. */
function sqliteBytes(path: string): number {
  return sizeOf(path) + sizeOf(`${path}-wal`);
}

/**
 * Copies the WAL into the database and truncates it to nothing (SQLite; nothing to do on
 * PostgreSQL). Returns false when a reader in another connection kept it from finishing; the
 * WAL is then reused from its start at the next checkpoint, only not shrunk.
 */
export function truncateWal(db: Db): boolean {
  if (db.sqlite === null || sqliteFile(db) === null) return true;
  const [result] = db.sqlite.pragma('wal_checkpoint(TRUNCATE)') as { busy: number }[];
  return result?.busy === 0;
}

/**
 * Rewrites the database so that the space of deleted rows goes back to the file system: SQLite's
 * VACUUM of the whole file (it holds the write lock meanwhile, and its new pages pass through the
 * WAL, truncated after), PostgreSQL's VACUUM of `table` (space at the table's end goes back; the
 * rest becomes reusable: only VACUUM FULL, which locks the table, returns it all). Null for an
 * in-memory database.
 */
export async function vacuum(db: Db, table: keyof Database): Promise<SpaceUse | null> {
  if (db.dialect === 'postgres') {
    const size = async () => {
      const result = await sql<{ bytes: number }>`select pg_total_relation_size(${table}::regclass) as bytes`.execute(db.kysely);
      return Number(result.rows[0]?.bytes ?? 0);
    };
    const before = await size();
    await sql`vacuum (analyze) ${sql.table(table)}`.execute(db.kysely);
    return { before, after: await size() };
  }
  const path = sqliteFile(db);
  if (path === null || db.sqlite === null) return null;
  const before = sqliteBytes(path);
  db.sqlite.exec('VACUUM');
  truncateWal(db);
  return { before, after: sqliteBytes(path) };
}
