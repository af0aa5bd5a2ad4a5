// The panel's tables open sorted by a timestamp: posts by updated_at, users by created_at, newest
// first. Without an index each page of them read and sorted the whole table (with every post's
// body) to keep 15 rows: 800 µs of SQLite per /admin/posts on 1,000 posts, growing with the
// table. With (column, id), the same order as the tables' tie-break, both databases walk the
// index and stop after the page (issue 26).
import type { AnyDb } from './helpers.js';

const INDEXES = [
  { name: 'posts_updated_at_index', table: 'posts', columns: ['updated_at', 'id'] },
  { name: 'users_created_at_index', table: 'users', columns: ['created_at', 'id'] },
] as const;

export async function up(db: AnyDb): Promise<void> {
  for (const index of INDEXES) await db.schema.createIndex(index.name).on(index.table).columns([...index.columns]).execute();
}

export async function down(db: AnyDb): Promise<void> {
  for (const index of INDEXES) await db.schema.dropIndex(index.name).execute();
}
