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

// OWASP's minimum for argon2id is m=19 MiB, t=2, p=1: the default, and the least ARGON_MEMORY
// and ARGON_TIME may ask for outside tests (config.ts). The hashing runs on libuv's thread pool,
// off the event loop.
export type ArgonCost = { memoryKib: number; iterations: number };
export const OWASP_ARGON2ID: ArgonCost = { memoryKib: 19456, iterations: 2 };

export const BCRYPT_MAX_BYTES = 72;

function isBcrypt(stored: string): boolean {
  return /^\$2[aby]\$\d{2}\$/.test(stored);
}

/**
 * Hashes and checks passwords at one argon2id cost. The services use the one config.ts
 * describes; the suite's test apps use a low one, as Laravel's phpunit.xml lowers
 * BCRYPT_ROUNDS: the argon2 work was a fifth of the suite's time.
 */
export class PasswordHasher {
  // `algorithm: 2` is Algorithm.Argon2id (a const enum, which isolated modules cannot import).
  private readonly options;
  private readonly prefix: string;
  private dummyHash: Promise<string> | null = null;

  constructor(cost: ArgonCost = OWASP_ARGON2ID) {
    this.options = { algorithm: 2, memoryCost: cost.memoryKib, timeCost: cost.iterations, parallelism: 1 } as const;
    this.prefix = `$argon2id$v=19$m=${cost.memoryKib},t=${cost.iterations},p=1$`;
  }

  /** Hashes a password with this hasher's argon2id parameters. */
  hash(password: string): Promise<string> {
    return withHashSlot(() => hash(password, this.options));
  }

  /**
   * Checks a password against a stored argon2 or bcrypt hash; false for any malformed hash. An
   * account made through a provider has no hash (null): no password ever matches it, after the
   * same argon2 work as a wrong one, so a password form cannot tell that the account has none.
   */
  async verify(stored: string | null, password: string): Promise<boolean> {
    if (stored === null) return this.verifyDummy(password);
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

  /** True when the hash is not argon2id with this hasher's parameters (bcrypt, or other settings); never without one. */
  needsRehash(stored: string | null): boolean {
    return stored !== null && !stored.startsWith(this.prefix);
  }

  /**
   * Verifies against a fixed hash of the same cost and returns false. Called when no account has
   * the email, so an unknown email costs the same argon2 work as a wrong password and timing
   * reveals nothing.
   */
  async verifyDummy(password: string): Promise<false> {
    this.dummyHash ??= this.hash('tessera-dummy-password-for-timing');
    const stored = await this.dummyHash;
    await withHashSlot(() => verify(stored, password)).catch(() => false);
    return false;
  }
}

/** At OWASP's minimum, for code outside the services: the bench's and the tests' own accounts. */
const owasp = new PasswordHasher();
export const hashPassword = (password: string): Promise<string> => owasp.hash(password);
export const verifyPassword = (stored: string | null, password: string): Promise<boolean> => owasp.verify(stored, password);
export const needsRehash = (stored: string | null): boolean => owasp.needsRehash(stored);
export const verifyDummy = (password: string): Promise<false> => owasp.verifyDummy(password);
