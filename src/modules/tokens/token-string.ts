// The plaintext token format, in Sanctum 4's layout: `<id>|<prefix><40 alphanumerics><crc32>`.
// Only the SHA-256 of the part after the pipe is stored, as Sanctum does, so tokens issued by a
// Laravel app keep working after an import. No framework or database here.
import { hash, randomBytes, timingSafeEqual } from 'node:crypto';
import { crc32 } from 'node:zlib';

const ALPHABET = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';
const ENTROPY_LENGTH = 40;
const MAX_ID = 2_147_483_647;

/** `length` characters drawn uniformly from [A-Za-z0-9] by a CSPRNG (rejection sampling, no modulo bias). */
export function randomAlphanumeric(length: number): string {
  let out = '';
  while (out.length < length) {
    for (const byte of randomBytes(length * 2)) {
      // 248 = 4 * 62: bytes at or above it would favour the first letters.
      if (byte < 248) out += ALPHABET[byte % 62];
      if (out.length === length) break;
    }
  }
  return out;
}

// In two halves: a CRC above 2^30 is not a small integer to V8, whose toString(16) then goes
// through its runtime (about a sixth of a microsecond on every token check).
function crcHex(text: string): string {
  const crc = crc32(text);
  return (crc >>> 16).toString(16).padStart(4, '0') + (crc & 0xffff).toString(16).padStart(4, '0');
}

/** A new secret: prefix + 40 random alphanumerics + their CRC32, so secret scanners can spot leaks. */
export function generateSecret(prefix: string): string {
  const entropy = randomAlphanumeric(ENTROPY_LENGTH);
  return `${prefix}${entropy}${crcHex(entropy)}`;
}

/** SHA-256 hex of a secret: the only form in which a token is stored. */
export function hashSecret(secret: string): string {
  return hash('sha256', secret, 'hex');
}

/** The SHA-256 of a secret as bytes, to compare with digestBytes() of a stored hash. */
export function secretDigest(secret: string): Buffer {
  return hash('sha256', secret, 'buffer');
}

/**
 * A stored digest as bytes, for sameDigest(). Only the exact stored form — 64 lowercase hex
 * characters, as hashSecret() and Sanctum write it — is read; anything else gives no bytes and
 * matches nothing (Buffer's hex parser alone would stop at the first bad character and keep the rest).
 */
export function digestBytes(storedHex: string): Buffer {
  return /^[0-9a-f]{64}$/.test(storedHex) ? Buffer.from(storedHex, 'hex') : Buffer.alloc(0);
}

/** Constant-time comparison of two digests as bytes (tokens, remember-me validators, reset tokens). */
export function sameDigest(a: Buffer, b: Buffer): boolean {
  return a.length === b.length && timingSafeEqual(a, b);
}

/** A token's two parts: the row id, and the secret whose SHA-256 the row holds. */
export type TokenCredentials = Readonly<{ id: number; secret: string }>;

/**
 * Splits `<id>|<secret>` and checks its shape and checksum. Returns null for anything malformed,
 * so garbage is refused before any database query.
 */
export function parseToken(plaintext: string, prefix: string): TokenCredentials | null {
  const pipe = plaintext.indexOf('|');
  if (pipe < 1 || pipe > 10) return null;
  const idPart = plaintext.slice(0, pipe);
  if (!/^[1-9][0-9]*$/.test(idPart)) return null;
  const id = Number(idPart);
  if (id > MAX_ID) return null;
  const secret = plaintext.slice(pipe + 1);
  if (secret.length !== prefix.length + ENTROPY_LENGTH + 8 || !secret.startsWith(prefix)) return null;
  const entropy = secret.slice(prefix.length, prefix.length + ENTROPY_LENGTH);
  const checksum = secret.slice(prefix.length + ENTROPY_LENGTH);
  if (!/^[A-Za-z0-9]{40}$/.test(entropy) || crcHex(entropy) !== checksum) return null;
  return { id, secret };
}

/**
 * The token of an Authorization header: null when there is no header, 'invalid' for any other
 * scheme or a malformed token. The scheme is matched exactly ("Bearer", one space, one token):
 * Laravel accepts any case, but a strict form leaves no variant for a proxy or a log filter to
 * treat differently; tokens in cookies or query parameters are never read.
 */
export function parseBearer(header: string | undefined, prefix: string): TokenCredentials | 'invalid' | null {
  if (header === undefined) return null;
  if (!header.startsWith('Bearer ')) return 'invalid';
  return parseToken(header.slice(7), prefix) ?? 'invalid';
}
