// Signed, expiring URLs (Laravel's URL::temporarySignedRoute): `expires` (Unix seconds) is added
// to the query, then `signature` = HMAC-SHA256 over the whole absolute URL. Changing any part of
// the path, the query or the expiry invalidates it; the key is derived from APP_KEY.
import { createHmac, timingSafeEqual } from 'node:crypto';

function sign(key: Buffer, url: string): string {
  return createHmac('sha256', key).update(url).digest('hex');
}

/** `base` + `path` with `expires` and `signature` appended to the query. */
export function signedUrl(key: Buffer, base: string, path: string, expiresAt: Date, params: Record<string, string> = {}): string {
  const query = new URLSearchParams({ ...params, expires: String(Math.floor(expiresAt.getTime() / 1000)) });
  const unsigned = `${base}${path}?${query.toString()}`;
  query.append('signature', sign(key, unsigned));
  return `${base}${path}?${query.toString()}`;
}

export type SignatureCheck = 'valid' | 'invalid' | 'expired';

/**
 * Checks a request path (with its query) against the signature it carries, as if it had been
 * requested at `base` (APP_URL: the Host header is the client's to choose, the key is not).
 */
export function checkSignature(key: Buffer, base: string, pathWithQuery: string, now: number): SignatureCheck {
  let url: URL;
  try {
    url = new URL(pathWithQuery, 'http://placeholder.invalid');
  } catch {
    return 'invalid';
  }
  const query = new URLSearchParams(url.search);
  const signature = query.get('signature') ?? '';
  query.delete('signature');
  const expected = Buffer.from(sign(key, `${base}${url.pathname}?${query.toString()}`), 'utf8');
  const given = Buffer.from(signature, 'utf8');
  if (given.length !== expected.length || !timingSafeEqual(given, expected)) return 'invalid';
  const expires = Number(query.get('expires'));
  if (!Number.isInteger(expires) || expires * 1000 <= now) return 'expired';
  return 'valid';
}
