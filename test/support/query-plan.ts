// What a page costs the database, for the tests of the panel's tables: the statements a request
// runs (a spy on the shared executor; the queries still run) and the plan the database makes of one.
import { CompiledQuery, sql } from 'kysely';
import { onPostgres, type TestApp } from '../helpers.js';

/** The statements the app's database runs while `run` does (a spy on the shared executor; the queries still run). */
export async function queriesDuring(t: TestApp, run: () => Promise<unknown>): Promise<CompiledQuery[]> {
  const executor = t.db.kysely.getExecutor();
  const seen: CompiledQuery[] = [];
  const original = executor.executeQuery.bind(executor);
  executor.executeQuery = ((query, ...rest) => {
    seen.push(query);
    return original(query, ...rest);
  }) as typeof executor.executeQuery;
  try {
    await run();
  } finally {
    executor.executeQuery = original;
  }
  return seen;
}

export const statementsDuring = async (t: TestApp, run: () => Promise<unknown>): Promise<string[]> => (await queriesDuring(t, run)).map((query) => query.sql);

/**
 * The plan of a query, one line per step. PostgreSQL is told to avoid sequential scans, which
 * its planner rightly prefers on a test's few rows: the question is whether an index can give
 * the order, and a plan with a Sort step says it cannot.
 */
export async function planOf(t: TestApp, query: CompiledQuery): Promise<string[]> {
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
