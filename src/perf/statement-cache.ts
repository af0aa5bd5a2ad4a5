// Prepared statements kept for Kysely's SQLite driver.
import type SQLite from 'better-sqlite3';

// Kysely's SQLite driver prepares every statement anew (~25 µs each); the app runs a few dozen
// distinct statements, so each is prepared once and kept (least recently used beyond 256).
// Reusing a statement is safe: the driver runs one query at a time on its single connection.
export function withStatementCache(handle: SQLite.Database, size = 256): SQLite.Database {
  const cache = new Map<string, SQLite.Statement>();
  const prepare = (source: string): SQLite.Statement => {
    let statement = cache.get(source);
    if (statement !== undefined) {
      cache.delete(source);
    } else {
      statement = handle.prepare(source);
      if (cache.size >= size) cache.delete(cache.keys().next().value as string);
    }
    cache.set(source, statement);
    return statement;
  };
  return new Proxy(handle, {
    get(target, property) {
      if (property === 'prepare') return prepare;
      const value: unknown = Reflect.get(target, property, target);
      return typeof value === 'function' ? (value as (...args: unknown[]) => unknown).bind(target) : value;
    },
  });
}
