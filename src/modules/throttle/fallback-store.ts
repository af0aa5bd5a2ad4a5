// What the account throttles (and the API's password limits, which count through them) do when
// their shared store (Redis or the database) fails.
import type { FallbackCount } from '../rate-limit/store-state.js';
import { MemoryThrottleStore, type Bucket, type ThrottleStore } from './throttle.js';

export type ThrottleLogger = { warn(details: object, message: string): void };

const WARN_EVERY_MS = 60_000;

/**
 * A shared store that falls back, call by call, to a store in this process's memory.
 *
 * The decision, and why: a failing shared store must neither fail the request nor stop the
 * throttling. The API's request limit lets requests through when its store fails (it protects
 * the service's capacity); these throttles protect passwords (the site's and the panel's logins,
 * POST /api/tokens, the API's password change), and letting every attempt through would give an
 * attacker who can knock Redis over unlimited guesses. Refusing every login would lock every
 * user out for as long as Redis or the database is away. So each failed call is
 * answered from this process's own counts instead: still limited, only per instance (N instances
 * give N times the guesses, as the memory store always did) until the shared store answers again.
 * Counts made meanwhile stay in this process; the shared counts resume where they were. One
 * warning a minute at most says so, without the key (it holds an email and an IP).
 */
export class FallbackThrottleStore implements ThrottleStore {
  private readonly local = new MemoryThrottleStore();
  private lastWarning = Number.NEGATIVE_INFINITY;

  constructor(
    private readonly shared: ThrottleStore,
    private readonly logger: ThrottleLogger,
    /** Counted at every failed call, for GET /metrics (rate-limit/store-state.ts fallbacksOf). */
    private readonly fallbacks: FallbackCount = { count: 0 },
    private readonly clock: () => number = Date.now,
  ) {}

  async hit(key: string, decayMs: number, now: number): Promise<Bucket> {
    try {
      return await this.shared.hit(key, decayMs, now);
    } catch (error) {
      this.failed(error);
      return this.local.hit(key, decayMs, now);
    }
  }

  async get(key: string, now: number): Promise<Bucket | null> {
    try {
      return await this.shared.get(key, now);
    } catch (error) {
      this.failed(error);
      return this.local.get(key, now);
    }
  }

  // Both are cleared: counts left in memory from an outage would otherwise come back at the next one.
  async clear(key: string): Promise<void> {
    await this.local.clear(key);
    try {
      await this.shared.clear(key);
    } catch (error) {
      this.failed(error);
    }
  }

  private failed(error: unknown): void {
    this.fallbacks.count += 1;
    const now = this.clock();
    if (now - this.lastWarning < WARN_EVERY_MS) return;
    this.lastWarning = now;
    this.logger.warn({ err: error }, 'throttle store failed; counting in this process only');
  }
}
