// The Redis side of the shared limits: the connection settings and the key prefix of a
// deployment, used by the API rate limits (src/plugins/rate-limit.ts) and the account throttles.
import { createHash } from 'node:crypto';
import { Redis } from 'ioredis';
import { deriveKey } from '../shared/keys.js';

/** The prefix of this deployment's keys in a shared store (instances of one deployment share it). */
export function rateLimitNamespace(appKey: Buffer): string {
  return `tessera:rl:${createHash('sha256').update(deriveKey(appKey, 'rate-limit-namespace')).digest('hex').slice(0, 12)}:`;
}

/** A client that connects when first asked to (or on connect()) and never makes a caller wait for an absent Redis. */
export function createRedisClient(url: string): Redis {
  // No offline queue and one retry: with Redis away a request must not wait for it. A Redis that
  // stops answering without closing the connection (frozen, or the network dropping packets)
  // would otherwise hold every limited request until the kernel gives the socket up, minutes
  // later: a command unanswered after a second fails instead, and the limits fall back as for a
  // closed connection. The limits' commands take well under a millisecond.
  const redis = new Redis(url, { enableOfflineQueue: false, maxRetriesPerRequest: 1, connectTimeout: 2000, commandTimeout: 1000, lazyConnect: true });
  // Failures reach the caller of each command; the client's own error events would only repeat them.
  redis.on('error', () => undefined);
  return redis;
}

const connecting = new WeakMap<Redis, Promise<void>>();

/**
 * Starts the first connection of a lazy client and waits for it; later, with Redis away, returns
 * at once (ioredis reconnects in the background and commands fail meanwhile). Without an offline
 * queue a command sent before the first connection is up would fail, so every caller of that
 * moment waits for the one connection attempt.
 */
export async function connectedOnce(redis: Redis): Promise<void> {
  if (redis.status === 'wait') {
    connecting.set(
      redis,
      redis.connect().finally(() => connecting.delete(redis)),
    );
  }
  await connecting.get(redis);
}
