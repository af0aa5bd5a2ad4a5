// Throttle counts in the application database, so that every instance on one PostgreSQL (or one
// SQLite file) counts a login's failures together. They share the rate_limits table with the
// API's limits (RATE_LIMIT_STORE=database), under names of their own (sharedBucketName).
import type { Db } from '../../db/connect.js';
import { DatabaseRateLimitStore } from '../rate-limit/database-store.js';
import { sharedBucketName, type Bucket, type ThrottleStore } from './throttle.js';

export class DatabaseThrottleStore implements ThrottleStore {
  // The API limits' atomic upsert (and its occasional sweep of closed windows): concurrent hits
  // from several instances are all counted.
  private readonly counter: DatabaseRateLimitStore;

  /** `secret` keys the bucket names: every instance of a deployment must be given the same. */
  constructor(
    private readonly db: Db,
    private readonly secret: Buffer,
  ) {
    this.counter = new DatabaseRateLimitStore(db);
  }

  hit(key: string, decayMs: number, now: number): Promise<Bucket> {
    return this.counter.count(sharedBucketName(this.secret, key), decayMs, now);
  }

  async get(key: string, now: number): Promise<Bucket | null> {
    const row = await this.db.kysely
      .selectFrom('rate_limits')
      .select(['hits', 'reset_at'])
      .where('bucket', '=', sharedBucketName(this.secret, key))
      .where('reset_at', '>', now)
      .executeTakeFirst();
    return row === undefined ? null : { hits: Number(row.hits), resetAt: Number(row.reset_at) };
  }

  async clear(key: string): Promise<void> {
    await this.db.kysely.deleteFrom('rate_limits').where('bucket', '=', sharedBucketName(this.secret, key)).execute();
  }
}
