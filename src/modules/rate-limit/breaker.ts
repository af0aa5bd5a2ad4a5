// A circuit breaker in front of the limits' Redis (RATE_LIMIT_STORE=redis): the API rate limits
// (plugins/rate-limit.ts), the account throttles (modules/throttle/redis-store.ts) and GET /up
// (store-state.ts) send their commands through the one breaker of their client.
//
// Why: a Redis that stops answering without closing its connections (frozen, or packets dropped)
// makes every command wait out the client's command timeout (a second, redis.ts), so every limited
// request waited a second: GET /api/user fell from about 1,200 to 2 requests/s for the whole
// freeze. After FAILURES failures in a row the breaker opens: calls are refused at once, without
// being sent, and every caller falls back as for any failure of the store (the request limit lets
// requests through, the password limits count in this process: never open). Meanwhile one PING
// every COOL_DOWN_MS, in the background, asks whether Redis answers again (half-open while it is
// out); its answer closes the breaker and the counts go back to Redis.
import type { Redis } from 'ioredis';
import { connectedOnce } from './redis.js';

/** closed: calls go to Redis; open: they are refused at once; half-open: open, with a probe out. */
export type BreakerState = 'closed' | 'open' | 'half-open';

/** The refusal of a call while the breaker is open: the caller falls back, as for a failed command. */
export class BreakerOpenError extends Error {
  constructor() {
    super('Redis is skipped for a while: its last commands failed');
    this.name = 'BreakerOpenError';
  }
}

export type BreakerOptions = {
  /** Failures in a row that open the breaker. */
  failures: number;
  /** How long the breaker stays open before each probe. */
  coolDownMs: number;
  /** Asks the store whether it answers; resolves when it does. */
  probe: () => Promise<unknown>;
  /** False once the client is closed for good: no more probes then. */
  alive?: () => boolean;
};

type Listener = (state: BreakerState, previous: BreakerState) => void;

// Three, not one: a single failed command (a script error, a reconnect under way) is no outage.
// A frozen Redis still costs only the requests that were under way when it froze plus, at most,
// two more commands' timeouts.
const FAILURES = 3;
// Two seconds: an outage costs one failed PING every two seconds, and service returns at most
// about two seconds after Redis does.
const COOL_DOWN_MS = 2000;

export class Breaker {
  private current: BreakerState = 'closed';
  private failuresInRow = 0;
  private fallbackCount = 0;
  private timer: NodeJS.Timeout | null = null;
  private readonly listeners = new Set<Listener>();

  constructor(private readonly options: BreakerOptions) {}

  get state(): BreakerState {
    return this.current;
  }

  /** Calls answered without the store so far (refused while open, or failed): the fallbacks. */
  get fallbacks(): number {
    return this.fallbackCount;
  }

  /**
   * Runs `call` against the store while the breaker is closed, and counts its outcome; while it
   * is open, rejects at once with BreakerOpenError, without calling.
   */
  run<T>(call: () => Promise<T>): Promise<T> {
    if (this.current !== 'closed') {
      this.fallbackCount += 1;
      return Promise.reject(new BreakerOpenError());
    }
    return call().then(this.succeeded, this.failed);
  }

  /** Calls `listener` at every change of state; returns what removes it. */
  onChange(listener: Listener): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /** Stops probing (the client is closed); the state stays as it is. */
  stop(): void {
    if (this.timer !== null) clearTimeout(this.timer);
    this.timer = null;
  }

  private readonly succeeded = <T>(result: T): T => {
    this.failuresInRow = 0;
    return result;
  };

  private readonly failed = (error: unknown): never => {
    this.fallbackCount += 1;
    this.failuresInRow += 1;
    if (this.current === 'closed' && this.failuresInRow >= this.options.failures) this.open();
    throw error;
  };

  private open(): void {
    this.set('open');
    // The probe never holds the process open: a CLI command or a test may end meanwhile.
    this.timer = setTimeout(() => this.probe(), this.options.coolDownMs).unref();
  }

  private probe(): void {
    this.timer = null;
    if (this.options.alive?.() === false) return;
    this.set('half-open');
    this.options.probe().then(
      () => {
        this.failuresInRow = 0;
        this.set('closed');
      },
      () => this.open(),
    );
  }

  private set(state: BreakerState): void {
    const previous = this.current;
    if (previous === state) return;
    this.current = state;
    for (const listener of this.listeners) listener(state, previous);
  }
}

const breakers = new WeakMap<Redis, Breaker>();

/**
 * The one breaker of a Redis client (made at its first use): every user of the client shares it,
 * so the failures one sees spare the others the wait. Metrics read its state and fallbacks.
 */
export function breakerFor(redis: Redis): Breaker {
  let breaker = breakers.get(redis);
  if (breaker === undefined) {
    const made = new Breaker({
      failures: FAILURES,
      coolDownMs: COOL_DOWN_MS,
      probe: async () => {
        await connectedOnce(redis);
        await redis.ping();
      },
      alive: () => redis.status !== 'end',
    });
    redis.once('end', () => made.stop());
    breakers.set(redis, made);
    breaker = made;
  }
  return breaker;
}
