// Whether tests that need something from outside the repository run here: Chromium, Redis, a
// redis-server binary, PostgreSQL. On a developer's machine a missing one skips its tests with the
// reason printed. With CI=true (.ci/run) a missing one is an error: the run fails rather than
// passing with tests quietly left out.
import { spawnSync } from 'node:child_process';
import { Redis } from 'ioredis';
import { REDIS_URL, onPostgres } from '../helpers.js';

const strict = process.env.CI === 'true';

/**
 * The `skip` option of tests that need a service: false when it is there (`missing` false),
 * otherwise the reason, or, with CI=true, an error naming it.
 */
export function skipWithout(missing: string | false): string | false {
  if (missing === false) return false;
  if (strict) throw new Error(`${missing}, and CI=true: a missing service fails the run instead of skipping its tests`);
  return missing;
}

/**
 * The `skip` option of tests of PostgreSQL alone. Not a missing service: the SQLite run of the
 * suite skips them and the PostgreSQL run (TEST_DATABASE_URL) runs them, in CI as elsewhere.
 */
export const needsPostgres: string | false = onPostgres ? false : 'needs PostgreSQL: run with TEST_DATABASE_URL=postgres://…';

/** The `skip` option of tests of the SQLite file alone (`why`: what PostgreSQL does instead). */
export const sqliteOnly = (why: string): string | false => (onPostgres ? `SQLite only: ${why}` : false);

/**
 * The `skip` option of tests that do not depend on the database (`what` they test: a page's
 * layout in Chromium, the command line's help): they run once, in the SQLite run of the suite, so
 * the PostgreSQL run (CI runs both) does not repeat them.
 */
export const oncePerRun = (what: string): string | false => (onPostgres ? `runs once, with SQLite: ${what}, not the database` : false);

/** The `skip` option of tests that talk to the Redis at REDIS_URL. */
export async function skipWithoutRedis(): Promise<string | false> {
  const probe = new Redis(REDIS_URL, { lazyConnect: true, connectTimeout: 1000, maxRetriesPerRequest: 0, retryStrategy: () => null });
  probe.on('error', () => undefined);
  try {
    await probe.connect();
    await probe.ping();
    return false;
  } catch {
    return skipWithout(`Redis not reachable at ${REDIS_URL}`);
  } finally {
    probe.disconnect();
  }
}

/** The `skip` option of tests that start a redis-server of their own. */
export const skipWithoutRedisServer = (): string | false =>
  skipWithout(spawnSync('redis-server', ['--version']).status === 0 ? false : 'redis-server is not installed');
