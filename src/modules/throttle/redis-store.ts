// Throttle counts in Redis (RATE_LIMIT_STORE=redis), shared by every instance of a deployment:
// keys under the deployment's namespace (rateLimitNamespace), windows kept by Redis's expiry.
// Every command goes through the client's breaker (rate-limit/breaker.ts): while it is open the
// store fails at once, and FallbackThrottleStore counts in this process without waiting.
import type { Redis } from 'ioredis';
import { breakerFor, type Breaker } from '../rate-limit/breaker.js';
import { connectedOnce } from '../rate-limit/redis.js';
import { sharedBucketName, type Bucket, type ThrottleStore } from './throttle.js';

// One script, so one atomic step: INCR counts (a missing key starts at 1), and a key without an
// expiry — the window's first hit — gets the window's length. Later hits leave the end where it
// is, as the memory store does. Returns the count and the milliseconds left.
const HIT = `
local hits = redis.call('INCR', KEYS[1])
local ttl = redis.call('PTTL', KEYS[1])
if ttl < 0 then
  redis.call('PEXPIRE', KEYS[1], ARGV[1])
  ttl = tonumber(ARGV[1])
end
return {hits, ttl}`;

// The count and the milliseconds left, read together; nothing when no window is open.
const GET = `
local hits = redis.call('GET', KEYS[1])
local ttl = redis.call('PTTL', KEYS[1])
if not hits or ttl < 0 then return nil end
return {tonumber(hits), ttl}`;

export type RedisThrottleOptions = {
  /** The deployment's key prefix (rateLimitNamespace(APP_KEY)). */
  namespace: string;
  /** Keys the bucket names: every instance of a deployment must be given the same. */
  secret: Buffer;
};

export class RedisThrottleStore implements ThrottleStore {
  private readonly breaker: Breaker;

  /** `redis` is made by createRedisClient (lazy, no offline queue); its owner disconnects it. */
  constructor(
    private readonly redis: Redis,
    private readonly options: RedisThrottleOptions,
  ) {
    this.breaker = breakerFor(redis);
  }

  async hit(key: string, decayMs: number, now: number): Promise<Bucket> {
    const [hits, ttl] = parsePair(await this.command(() => this.redis.eval(HIT, 1, this.name(key), Math.max(1, Math.round(decayMs)))));
    if (hits === null) throw new Error('throttle script returned nothing');
    return { hits, resetAt: now + ttl };
  }

  async get(key: string, now: number): Promise<Bucket | null> {
    const [hits, ttl] = parsePair(await this.command(() => this.redis.eval(GET, 1, this.name(key))));
    return hits === null ? null : { hits, resetAt: now + ttl };
  }

  async clear(key: string): Promise<void> {
    await this.command(() => this.redis.del(this.name(key)));
  }

  /** One command, once the first connection is up, through the breaker. */
  private command<T>(send: () => Promise<T>): Promise<T> {
    return this.breaker.run(async () => {
      await connectedOnce(this.redis);
      return send();
    });
  }

  private name(key: string): string {
    return `${this.options.namespace}${sharedBucketName(this.options.secret, key)}`;
  }
}

function parsePair(reply: unknown): [number | null, number] {
  if (reply === null) return [null, 0];
  if (!Array.isArray(reply) || reply.length !== 2) throw new Error('unexpected reply from the throttle script');
  return [Number(reply[0]), Number(reply[1])];
}
