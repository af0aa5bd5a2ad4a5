// A rate-limit store in the application database (the rate_limits table), so that several
// instances on one PostgreSQL (or one SQLite file) share their limits without Redis. It has the
// callback shape @fastify/rate-limit expects of a store, and no framework import.
import { sql } from 'kysely';
import { prepare, type Db, type Prepared } from '../../db/connect.js';

export type Hit = { current: number; ttl: number };

// Deleting expired buckets on one hit in this many keeps the table small without a timer.
const SWEEP_EVERY = 1000;

export class DatabaseRateLimitStore {
  private readonly upsert: Prepared<{ hits: number; reset_at: number }>;
  private hitsSinceSweep = 0;

  constructor(private readonly db: Db) {
    // One atomic statement: a new bucket starts at 1; an expired one restarts at 1 with a new
    // window; a live one counts up. Both databases lock the row for the upsert, so concurrent
    // hits from several instances are never lost.
    const query = sql<{ hits: number; reset_at: number }>`
      insert into rate_limits (bucket, hits, reset_at) values (${''}, 1, ${0})
      on conflict (bucket) do update set
        hits = case when rate_limits.reset_at <= ${0} then 1 else rate_limits.hits + 1 end,
        reset_at = case when rate_limits.reset_at <= ${0} then excluded.reset_at else rate_limits.reset_at end
      returning hits, reset_at`.compile(db.kysely);
    this.upsert = prepare(db, 'rate_limit_hit', query);
  }

  /** Counts one hit in `bucket` for a window of `windowMs`; returns the count and the ms left. */
  async hit(bucket: string, windowMs: number): Promise<Hit> {
    const now = Date.now();
    const { hits, resetAt } = await this.count(bucket, windowMs, now);
    return { current: hits, ttl: Math.max(0, resetAt - now) };
  }

  /**
   * Counts one hit in `bucket` at `now` (ms since the epoch), in one atomic statement: the
   * window's hits and when it ends. The account throttles count through it too.
   */
  async count(bucket: string, windowMs: number, now: number): Promise<{ hits: number; resetAt: number }> {
    const row = await this.upsert.first([bucket, now + windowMs, now, now]);
    if (row === undefined) throw new Error('rate limit upsert returned no row');
    if (++this.hitsSinceSweep >= SWEEP_EVERY) {
      this.hitsSinceSweep = 0;
      void this.sweep(now).catch(() => undefined);
    }
    return { hits: Number(row.hits), resetAt: Number(row.reset_at) };
  }

  /** Deletes the buckets whose window ended before `now`. */
  async sweep(now = Date.now()): Promise<void> {
    await this.db.kysely.deleteFrom('rate_limits').where('reset_at', '<=', now).execute();
  }

  // The interface of @fastify/rate-limit's stores.
  incr(key: string, callback: (error: Error | null, result?: Hit) => void, timeWindow: number): void {
    this.hit(key, timeWindow).then(
      (result) => callback(null, result),
      (error: unknown) => callback(error instanceof Error ? error : new Error(String(error))),
    );
  }

  /** Every limiter shares the table: their bucket names never overlap. */
  child(): DatabaseRateLimitStore {
    return this;
  }
}
