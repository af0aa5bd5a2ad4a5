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
  // No offline queue and one retry: with Redis away a request must not wait for it.
  const redis = new Redis(url, { enableOfflineQueue: false, maxRetriesPerRequest: 1, connectTimeout: 2000, lazyConnect: true });
  // Failures reach the caller of each command; the client's own error events would only repeat them.
  redis.on('error', () => undefined);
  return redis;
}
