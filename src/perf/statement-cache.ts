// Prepared statements kept for Kysely's SQLite driver, and written so that they stay prepared.
import type SQLite from 'better-sqlite3';
import { SqliteDialect, SqliteQueryCompiler, type QueryCompiler } from 'kysely';

/**
 * SQLite's query compiler with every bound value written `+?` instead of `?`.
 *
 * SQLite lets the value bound to a plain `?` shape the plan: a `LIMIT ?`, a `col = ?` the chosen
 * index does not use (a value of 0 or 1 counts as more selective), a `LIKE ?` prefix. It then
 * marks the parameter so that binding it again re-prepares the statement, and
 * sqlite3_clear_bindings, which better-sqlite3 calls after every run, re-prepares any statement
 * with such a mark (sqlite3.c: sqlite3VdbeReprepareOnBind, sqlite3_clear_bindings). A kept
 * statement was then parsed and planned again at every run: two of them were a fifth of the
 * instructions of GET /security. The unary plus is a no-op on the value (same value, same type,
 * no affinity, as a bare parameter) and no code in the program; the planner does not look
 * through it, so it plans as it does for a value it does not know. The service has no partial
 * index and gathers no STAT4 samples, the two other places a bound value could help a plan.
 */
class KeptPlanCompiler extends SqliteQueryCompiler {
  protected override getCurrentParameterPlaceholder(): string {
    return '+?';
  }
}

/** Kysely's SQLite dialect, compiling with KeptPlanCompiler. */
export class KeptPlanSqliteDialect extends SqliteDialect {
  override createQueryCompiler(): QueryCompiler {
    return new KeptPlanCompiler();
  }
}

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
