// Secrets derived from APP_KEY, one per purpose, so that no two uses share a key.
import { createHmac } from 'node:crypto';

/** A key for one purpose, derived from APP_KEY, so that no two uses share a secret. */
export function deriveKey(appKey: Buffer, purpose: string): Buffer {
  return createHmac('sha256', appKey).update(`tessera:${purpose}`).digest();
}
