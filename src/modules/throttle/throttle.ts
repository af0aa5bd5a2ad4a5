// Counting attempts per key in fixed windows (Laravel's RateLimiter): tooManyAttempts, hit,
// clear, availableIn. The counts live behind ThrottleStore; the memory store is per process,
// so a deployment with several processes needs a shared store (database-store.ts, redis-store.ts,
// chosen by RATE_LIMIT_STORE in src/modules/auth/account-services.ts).
import { createHmac } from 'node:crypto';

/** An open window: its hit count and when it closes (ms since the epoch). */
export type Bucket = { hits: number; resetAt: number };

/** Where the counts live. Async so that a database or Redis store fits the same shape. */
export interface ThrottleStore {
  /** Adds a hit to the key's open window, or opens a window of `decayMs` with one hit. */
  hit(key: string, decayMs: number, now: number): Promise<Bucket>;
  /** The key's open window, or null when none is open. */
  get(key: string, now: number): Promise<Bucket | null>;
  clear(key: string): Promise<void>;
}

// Past this many keys, closed windows are swept before a new one is added, so a flood of
// distinct keys (one per guessed email) cannot grow the map without bound.
const SWEEP_THRESHOLD = 10_000;

export class MemoryThrottleStore implements ThrottleStore {
  private readonly buckets = new Map<string, Bucket>();

  async hit(key: string, decayMs: number, now: number): Promise<Bucket> {
    const open = await this.get(key, now);
    if (open !== null) {
      open.hits += 1;
      return { ...open };
    }
    if (this.buckets.size >= SWEEP_THRESHOLD) this.sweep(now);
    const bucket = { hits: 1, resetAt: now + decayMs };
    this.buckets.set(key, bucket);
    return { ...bucket };
  }

  async get(key: string, now: number): Promise<Bucket | null> {
    const bucket = this.buckets.get(key);
    if (bucket === undefined) return null;
    if (bucket.resetAt <= now) {
      this.buckets.delete(key);
      return null;
    }
    return bucket;
  }

  async clear(key: string): Promise<void> {
    this.buckets.delete(key);
  }

  /** How many keys are held (for tests of the sweep). */
  get size(): number {
    return this.buckets.size;
  }

  private sweep(now: number): void {
    for (const [key, bucket] of this.buckets) if (bucket.resetAt <= now) this.buckets.delete(key);
  }
}

/**
 * The name a throttle key is kept under in a shared store. Keys hold an email and an IP: an HMAC
 * keeps who tried to log in out of the database and Redis (as the API's login limit does), and
 * gives every name one short length (the rate_limits column holds 255 characters, an email alone
 * may fill them). `throttle:` is a prefix none of the API limits' buckets use.
 */
export function sharedBucketName(secret: Buffer, key: string): string {
  return `throttle:${createHmac('sha256', secret).update(key).digest('hex')}`;
}

export type ThrottleState = { limited: false } | { limited: true; retryAfterSeconds: number };

export class Throttle {
  constructor(
    private readonly store: ThrottleStore,
    private readonly clock: () => number = Date.now,
  ) {}

  /** Whether the key has used up `maxAttempts` in its open window, and for how long it stays so. */
  async check(key: string, maxAttempts: number): Promise<ThrottleState> {
    const now = this.clock();
    const bucket = await this.store.get(key, now);
    if (bucket === null || bucket.hits < maxAttempts) return { limited: false };
    return { limited: true, retryAfterSeconds: Math.max(1, Math.ceil((bucket.resetAt - now) / 1000)) };
  }

  /**
   * Counts an attempt, then says whether it is over the limit (more than `maxAttempts` in the
   * window). Counting before acting keeps a burst of parallel requests from all slipping in
   * under the limit, which a check-then-count would allow.
   */
  async attempt(key: string, maxAttempts: number, decaySeconds: number): Promise<ThrottleState> {
    const now = this.clock();
    const bucket = await this.store.hit(key, decaySeconds * 1000, now);
    if (bucket.hits <= maxAttempts) return { limited: false };
    return { limited: true, retryAfterSeconds: Math.max(1, Math.ceil((bucket.resetAt - now) / 1000)) };
  }

  /** Counts one attempt and returns the window; it opens at the first one and lasts `decaySeconds`. */
  hit(key: string, decaySeconds: number): Promise<Bucket> {
    return this.store.hit(key, decaySeconds * 1000, this.clock());
  }

  async clear(key: string): Promise<void> {
    await this.store.clear(key);
  }
}

/**
 * The form of an email used in throttle keys: compatibility-normalized (NFKC turns `ⓐ` or
 * full-width `Ａ` into `a`), stripped of diacritics and lower-cased, so that look-alike spellings
 * of one address share one bucket instead of each getting five fresh guesses.
 */
export function throttleEmail(email: string): string {
  return email
    .normalize('NFKC')
    .normalize('NFD')
    .replace(/\p{M}/gu, '')
    .toLowerCase()
    .normalize('NFKC')
    .trim();
}
