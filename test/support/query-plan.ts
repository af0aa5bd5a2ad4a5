// What a page costs the database, for the tests of the panel's tables: the statements a request
// runs (a spy on the shared executor; the queries still run) and the plan the database makes of one.
import { CompiledQuery, sql } from 'kysely';
import type { Db } from '../../src/db/connect.js';
import { onPostgres, type TestApp } from '../helpers.js';

/** A statement the database ran: its SQL and the values bound to it. */
export type Ran = { sql: string; parameters: readonly unknown[] };

/**
 * The statements the app's database runs while `run` does; the queries still run. Spies where
 * every statement passes: on SQLite better-sqlite3's statements (Kysely's queries and the
 * statement()s the service prepares itself), on PostgreSQL Kysely's executor and both places a
 * statement() may go (the pipelined connection, the pool).
 */
export async function queriesDuring(t: TestApp, run: () => Promise<unknown>): Promise<Ran[]> {
  const seen: Ran[] = [];
  const restore: (() => void)[] = [];
  const spy = <Target extends object, Key extends keyof Target>(target: Target, key: Key, record: (args: unknown[], self: unknown) => void) => {
    const original = target[key] as (...args: unknown[]) => unknown;
    target[key] = function (this: unknown, ...args: unknown[]) {
      record(args, this);
      return original.apply(this, args);
    } as Target[Key];
    restore.push(() => {
      target[key] = original as Target[Key];
    });
  };
  const sqlite = t.db.sqlite;
  if (sqlite !== null) {
    const statements = Object.getPrototypeOf(sqlite.prepare('select 1')) as Record<'all' | 'get' | 'run' | 'iterate', unknown>;
    for (const method of ['all', 'get', 'run', 'iterate'] as const) {
      // Kysely binds an array of values, a statement() each value as an argument.
      spy(statements, method, (args, self) => seen.push({ sql: (self as { source: string }).source, parameters: args.length === 1 && Array.isArray(args[0]) ? (args[0] as unknown[]) : args }));
    }
  } else {
    const named = (args: unknown[]) => {
      const query = args[0] as string | { text: string; values?: unknown[] };
      seen.push(typeof query === 'string' ? { sql: query, parameters: (args[1] as unknown[] | undefined) ?? [] } : { sql: query.text, parameters: query.values ?? [] });
    };
    const executor = t.db.kysely.getExecutor();
    spy(executor, 'executeQuery', (args) => seen.push(args[0] as CompiledQuery));
    if (t.db.reads !== null) spy(t.db.reads, 'query', named);
    if (t.db.pool !== null) spy(t.db.pool, 'query', named);
  }
  try {
    await run();
  } finally {
    for (const undo of restore.reverse()) undo();
  }
  // The change counters' own reads (SQLite's `total_changes()`, PostgreSQL's look) are not the page's.
  return seen.filter((query) => !/^\s*select total_changes\(\)|from data_version where/i.test(query.sql));
}

export const statementsDuring = async (t: TestApp, run: () => Promise<unknown>): Promise<string[]> => (await queriesDuring(t, run)).map((query) => query.sql);

/**
 * The plan of a query, one line per step. PostgreSQL is told to avoid sequential scans, which
 * its planner rightly prefers on a test's few rows: the question is whether an index can give
 * the order, and a plan with a Sort step says it cannot.
 */
export async function planOf(t: TestApp, query: Ran): Promise<string[]> {
  if (!onPostgres) {
    const rows = await t.db.kysely.executeQuery<{ detail: string }>(CompiledQuery.raw(`explain query plan ${query.sql}`, [...query.parameters]));
    return rows.rows.map((row) => row.detail);
  }
  return t.db.kysely.transaction().execute(async (trx) => {
    await sql`set local enable_seqscan = off`.execute(trx);
    const rows = await trx.executeQuery<{ 'QUERY PLAN': string }>(CompiledQuery.raw(`explain ${query.sql}`, [...query.parameters]));
    return rows.rows.map((row) => row['QUERY PLAN']);
  });
}

/**
 * What a PostgreSQL database object is sent while `run` does: the names of the reads that go on
 * the pipelined connection (the looks at the change counters and statement() reads,
 * perf/pipelined-reads.ts), and how many clients the pool lent (every Kysely statement takes one).
 */
export async function postgresTraffic(db: Db, run: () => Promise<unknown>): Promise<{ sent: string[]; acquired: number }> {
  const pool = db.pool!;
  const reads = db.reads!;
  const connect = pool.connect.bind(pool);
  const query = reads.query.bind(reads);
  const traffic = { sent: [] as string[], acquired: 0 };
  pool.connect = ((...args: unknown[]) => {
    traffic.acquired += 1;
    return (connect as (...args: unknown[]) => unknown)(...args);
  }) as typeof pool.connect;
  reads.query = ((config: { name: string }) => {
    traffic.sent.push(config.name);
    return query(config as never);
  }) as typeof reads.query;
  try {
    await run();
  } finally {
    pool.connect = connect;
    reads.query = query;
  }
  return traffic;
}
