// "Remember me": a long-lived cookie `<selector>.<validator>` bound to one row per device. The
// selector finds the row; only the SHA-256 of the validator is stored, so a read of the table
// logs nobody in. Each use replaces the validator (a copied cookie works once, then the owner's
// next visit or the thief's fails), and each device's row is forgotten on its own.
import { randomBytes } from 'node:crypto';
import type { UpdateResult } from 'kysely';
import type { Db } from '../../db/connect.js';
import { isDatabaseUnwritable } from '../../db/errors.js';
import { bookkeepingFailed } from '../../db/outage-log.js';
import type { User } from '../../db/types.js';
import { findUserById } from '../users/users.repository.js';
import { digestBytes, hashSecret, sameDigest, secretDigest } from '../tokens/token-string.js';

export const REMEMBER_DAYS = 30;
const LIFETIME_MS = REMEMBER_DAYS * 24 * 3_600_000;
const COOKIE_SHAPE = /^([A-Za-z0-9_-]{16})\.([A-Za-z0-9_-]{43})$/;

function parse(cookie: string): { selector: string; validator: string } | null {
  const match = COOKIE_SHAPE.exec(cookie);
  return match === null ? null : { selector: match[1]!, validator: match[2]! };
}

/** The selector of a well-formed cookie value (the row's public half), or null. */
export function selectorOf(cookie: string): string | null {
  return parse(cookie)?.selector ?? null;
}

export class RememberService {
  constructor(
    private readonly db: Db,
    private readonly clock: () => number = Date.now,
  ) {}

  /** Creates a token for a new device; returns the cookie value (shown to no one else). */
  async issue(userId: number): Promise<string> {
    const selector = randomBytes(12).toString('base64url');
    const validator = randomBytes(32).toString('base64url');
    const now = this.clock();
    await this.db.kysely
      .insertInto('remember_tokens')
      .values({
        user_id: userId,
        selector,
        validator_hash: hashSecret(validator),
        expires_at: new Date(now + LIFETIME_MS).toISOString(),
        last_used_at: null,
        created_at: new Date(now).toISOString(),
      })
      .execute();
    return `${selector}.${validator}`;
  }

  /**
   * Logs in by cookie: returns the user and the cookie's replacement, or null when the cookie is
   * malformed, unknown, wrong or expired. The validator is swapped with a compare-and-set, so of
   * two requests racing with one cookie only one wins. When the swap cannot be written (a full
   * disk) the visitor is a guest for this request, as for a refused cookie: a cookie that was not
   * replaced must not log anyone in (a copy would keep working), and the page they asked for is
   * read all the same. The failure is logged and dropped.
   */
  async consume(cookie: string): Promise<{ user: User; cookie: string } | null> {
    const parsed = parse(cookie);
    if (parsed === null) return null;
    const row = await this.db.kysely.selectFrom('remember_tokens').selectAll().where('selector', '=', parsed.selector).executeTakeFirst();
    if (row === undefined || !sameDigest(digestBytes(row.validator_hash), secretDigest(parsed.validator))) return null;
    const now = this.clock();
    if (Date.parse(row.expires_at) <= now) {
      // Only tidying (prune() would do it): a row left behind is refused all the same.
      await this.db.kysely
        .deleteFrom('remember_tokens')
        .where('id', '=', row.id)
        .execute()
        .catch((error: unknown) => {
          if (!isDatabaseUnwritable(error)) throw error;
          bookkeepingFailed(this.db, 'remember-me expiry', error);
        });
      return null;
    }
    const user = await findUserById(this.db.kysely, row.user_id);
    if (user === undefined) return null;
    const validator = randomBytes(32).toString('base64url');
    let swapped: UpdateResult | undefined;
    try {
      swapped = await this.db.kysely
        .updateTable('remember_tokens')
        .set({
          validator_hash: hashSecret(validator),
          last_used_at: new Date(now).toISOString(),
          // Sliding: a device in use stays remembered; one unused for REMEMBER_DAYS is forgotten.
          expires_at: new Date(now + LIFETIME_MS).toISOString(),
        })
        .where('id', '=', row.id)
        .where('validator_hash', '=', row.validator_hash)
        .executeTakeFirst();
    } catch (error) {
      if (!isDatabaseUnwritable(error)) throw error;
      bookkeepingFailed(this.db, 'remember-me use', error);
      return null;
    }
    if (Number(swapped?.numUpdatedRows ?? 0) !== 1) return null;
    return { user, cookie: `${parsed.selector}.${validator}` };
  }

  /** Forgets the device this cookie belongs to (logout); other devices stay remembered. */
  async forget(cookie: string): Promise<void> {
    const parsed = parse(cookie);
    if (parsed === null) return;
    await this.db.kysely.deleteFrom('remember_tokens').where('selector', '=', parsed.selector).execute();
  }

  /** Forgets the user's devices with these selectors (their sessions were ended); returns how many. */
  async forgetSelectors(userId: number, selectors: readonly string[]): Promise<number> {
    if (selectors.length === 0) return 0;
    const result = await this.db.kysely.deleteFrom('remember_tokens').where('user_id', '=', userId).where('selector', 'in', selectors).executeTakeFirst();
    return Number(result.numDeletedRows);
  }

  /** Forgets every device of the user but the one with `keepSelector` (log out other browser sessions). */
  async forgetAllExcept(userId: number, keepSelector: string | null): Promise<void> {
    let query = this.db.kysely.deleteFrom('remember_tokens').where('user_id', '=', userId);
    if (keepSelector !== null) query = query.where('selector', '!=', keepSelector);
    await query.execute();
  }

  /** Forgets every device of the user (password reset or change). */
  async forgetAll(userId: number): Promise<void> {
    await this.db.kysely.deleteFrom('remember_tokens').where('user_id', '=', userId).execute();
  }

  /** Deletes expired rows; returns how many. */
  async prune(): Promise<number> {
    const now = new Date(this.clock()).toISOString();
    const result = await this.db.kysely.deleteFrom('remember_tokens').where('expires_at', '<=', now).executeTakeFirst();
    return Number(result.numDeletedRows);
  }

  /** Maximum age of the cookie, in seconds. */
  static readonly cookieMaxAgeSeconds = LIFETIME_MS / 1000;
}
