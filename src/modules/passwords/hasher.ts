// Password hashing: argon2id for every new hash; bcrypt ($2y$/$2b$/$2a$) hashes from a Laravel
// import still verify and are rehashed to argon2id at the next successful login.
import { availableParallelism } from 'node:os';
import { hash, verify } from '@node-rs/argon2';
import bcrypt from 'bcryptjs';

// At most one argon2 computation per core at a time. libuv's pool has four threads: on a small
// machine four hashes at once take every core from the event loop, and a flood of logins then
// starves every other request. With one per core the logins still use all the cores, and the
// event loop keeps a fair share. Waiters are served in order.
const MAX_CONCURRENT_HASHES = Math.max(1, availableParallelism());
let running = 0;
const waiting: (() => void)[] = [];

async function withHashSlot<T>(work: () => Promise<T>): Promise<T> {
  if (running < MAX_CONCURRENT_HASHES) running += 1;
  else await new Promise<void>((resolve) => waiting.push(resolve));
  try {
    return await work();
  } finally {
    // The slot passes straight to the next waiter, so no newcomer can slip in between.
    const next = waiting.shift();
    if (next === undefined) running -= 1;
    else next();
  }
}

// OWASP's minimum for argon2id is m=19 MiB, t=2, p=1. The hashing runs on libuv's thread pool,
// off the event loop.
// `algorithm: 2` is Algorithm.Argon2id (a const enum, which isolated modules cannot import).
export const ARGON2_OPTIONS = { algorithm: 2, memoryCost: 19456, timeCost: 2, parallelism: 1 } as const;
const CURRENT_PREFIX = `$argon2id$v=19$m=${ARGON2_OPTIONS.memoryCost},t=${ARGON2_OPTIONS.timeCost},p=${ARGON2_OPTIONS.parallelism}$`;

/** Hashes a password with the current argon2id parameters. */
export function hashPassword(password: string): Promise<string> {
  return withHashSlot(() => hash(password, ARGON2_OPTIONS));
}

export const BCRYPT_MAX_BYTES = 72;

function isBcrypt(stored: string): boolean {
  return /^\$2[aby]\$\d{2}\$/.test(stored);
}

/**
 * Checks a password against a stored argon2 or bcrypt hash; false for any malformed hash. An
 * account made through a provider has no hash (null): no password ever matches it, after the same
 * argon2 work as a wrong one, so a password form cannot tell that the account has none.
 */
export async function verifyPassword(stored: string | null, password: string): Promise<boolean> {
  if (stored === null) return verifyDummy(password);
  try {
    // bcrypt reads only the first 72 bytes: a longer password would match every password that
    // shares those bytes. It is refused rather than truncated; such an (imported) account signs
    // in again through a password reset, which stores an argon2id hash of the whole password.
    if (isBcrypt(stored)) {
      if (Buffer.byteLength(password, 'utf8') > BCRYPT_MAX_BYTES) return false;
      return await bcrypt.compare(password, stored.replace(/^\$2y\$/, '$2b$'));
    }
    if (stored.startsWith('$argon2')) return await withHashSlot(() => verify(stored, password));
    return false;
  } catch {
    return false;
  }
}

/** True when the hash is not argon2id with today's parameters (bcrypt, or weaker settings); never without one. */
export function needsRehash(stored: string | null): boolean {
  return stored !== null && !stored.startsWith(CURRENT_PREFIX);
}

let dummyHash: Promise<string> | null = null;

/**
 * Verifies against a fixed hash and returns false. Called when no account has the email, so an
 * unknown email costs the same argon2 work as a wrong password and timing reveals nothing.
 */
export async function verifyDummy(password: string): Promise<false> {
  dummyHash ??= hashPassword('tessera-dummy-password-for-timing');
  const stored = await dummyHash;
  await withHashSlot(() => verify(stored, password)).catch(() => false);
  return false;
}
