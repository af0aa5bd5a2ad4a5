// Whether the store RATE_LIMIT_STORE names answers right now, for GET /up. Asked of the store
// itself each time (a Redis PING, a read of the rate_limits table), not inferred from the last
// request's luck, so a probe after the store came back says so at once. Redis is asked through
// its breaker (breaker.ts): while the breaker is open the answer is "not ok" at once, instead of
// waiting out the command timeout of a frozen Redis, and its background probe says when it is back.
import type { Redis } from 'ioredis';
import type { Config } from '../../config.js';
import type { Db } from '../../db/connect.js';
import { breakerFor } from './breaker.js';
import { connectedOnce } from './redis.js';

export type LimitStoreState = { kind: Config['rateLimitStore']; ok: boolean };

/** The state of the limits' store: memory always answers; Redis and the database are asked. */
export async function limitStoreState(kind: Config['rateLimitStore'], stores: { redis: Redis | null; db: Db }): Promise<LimitStoreState> {
  if (kind === 'memory') return { kind, ok: true };
  try {
    if (kind === 'redis') {
      const redis = stores.redis;
      if (redis === null) return { kind, ok: false };
      await breakerFor(redis).run(async () => {
        await connectedOnce(redis);
        await redis.ping();
      });
    } else {
      // The table itself, not only the connection: a missing or unreadable table fails the
      // limits as surely as a closed database.
      await stores.db.kysely.selectFrom('rate_limits').select('bucket').limit(1).execute();
    }
    return { kind, ok: true };
  } catch {
    return { kind, ok: false };
  }
}

/** How many calls the limits answered without their shared store: a count, read by GET /metrics. */
export type FallbackCount = { count: number };

const fallbackCounts = new WeakMap<object, FallbackCount>();

/**
 * The fallbacks of one shared store (the Redis client, or the database for
 * RATE_LIMIT_STORE=database), counted where each happens: the API's request limit letting a
 * request through (plugins/rate-limit.ts), a throttle counting in this process instead
 * (throttle/fallback-store.ts). Kept by the store's object, as breakerFor keeps a breaker: every
 * user of that store adds to the one count.
 */
export function fallbacksOf(store: object): FallbackCount {
  let found = fallbackCounts.get(store);
  if (found === undefined) {
    found = { count: 0 };
    fallbackCounts.set(store, found);
  }
  return found;
}
