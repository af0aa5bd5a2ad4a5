// Issuing, validating and revoking personal access tokens.
import type { Config } from '../../config.js';
import type { Kysely } from 'kysely';
import { statement, type Arg, type Db } from '../../db/connect.js';
import type { Database } from '../../db/types.js';
import { truncateWal } from '../../db/space.js';
import { bookkeepingFailed } from '../../db/outage-log.js';
import { then, type MaybePromise } from '../../lib/maybe-promise.js';
import { ABILITIES, parseAbilities, type Ability } from './abilities.js';
import { effectiveExpiry, lifetimeEnd, ownExpiry, type ExpiryRequest } from './expiry.js';
import { invalid } from '../shared/errors.js';
import { tokenLookup, type AuthenticatedToken, type FoundToken } from './tokens.repository.js';
import { generateSecret, hashSecret, parseToken, sameDigest, secretDigest, type TokenCredentials } from './token-string.js';

export type { AuthenticatedToken } from './tokens.repository.js';
export type { ExpiryRequest } from './expiry.js';

/** A token as its owner sees it on the API tokens page. */
export type UserToken = {
  id: number;
  name: string;
  abilities: string[];
  created_at: string;
  last_used_at: string | null;
  /** When it stops working, by its own date or the global lifetime; null: never. */
  expires_at: string | null;
  expired: boolean;
};

/**
 * The abilities of a token a user makes for themself: a subset of ABILITIES, in their order;
 * none chosen means read only, never `*`. Null when a choice is not an ability.
 */
export function chosenAbilities(choices: readonly string[]): Ability[] | null {
  if (choices.some((choice) => !(ABILITIES as readonly string[]).includes(choice))) return null;
  const chosen = ABILITIES.filter((ability) => choices.includes(ability));
  return chosen.length === 0 ? ['posts:read'] : chosen;
}

// last_used_at is written at most once a minute per token: a write per request would cost a
// third of the throughput of an authenticated read. It is bookkeeping: when it cannot be written
// (a full disk), the request is answered all the same (touch()).
const LAST_USED_RESOLUTION_MS = 60_000;

// The columns an owner may see (not the hash), of the user's tokens only.
function ownedBy(kysely: Kysely<Database>, userId: number) {
  return kysely.selectFrom('personal_access_tokens').select(['id', 'name', 'abilities', 'last_used_at', 'expires_at', 'created_at']).where('user_id', '=', userId);
}

const ownedNewestFirst = statement('tokens_of_user', (kysely, arg: Arg<{ userId: number }>) =>
  ownedBy(kysely, arg('userId')).orderBy('created_at', 'desc').orderBy('id', 'desc'),
);

/** A token as its owner may see it, as stored. */
export type OwnedTokenRow = Awaited<ReturnType<typeof ownedNewestFirst.all>>[number];

/** Reads a user's own tokens, newest first (src/perf/kept-reads.ts keeps them). */
export function tokensOf(db: Db): (userId: number) => Promise<OwnedTokenRow[]> {
  return (userId) => ownedNewestFirst.all(db, { userId });
}

export class TokenService {
  /**
   * `findToken`: how a token is found by id; the app passes the lookup kept in memory while the
   * database is unchanged (src/perf/kept-reads.ts), which may answer at once.
   */
  constructor(
    private readonly db: Db,
    private readonly config: Pick<Config, 'tokenExpirationMinutes' | 'tokenPrefix'>,
    private readonly findToken: (id: number) => MaybePromise<FoundToken | undefined> = tokenLookup(db, config.tokenExpirationMinutes),
    /** How the tokens page's list of a user's tokens is read (the app passes a kept one). */
    private readonly tokensOfUser: (userId: number) => MaybePromise<readonly OwnedTokenRow[]> = tokensOf(db),
  ) {}

  /** The `<id>|<secret>` parts of a plaintext token, or null when it is malformed. */
  parse(plaintext: string): TokenCredentials | null {
    return parseToken(plaintext, this.config.tokenPrefix);
  }

  /**
   * The own expiry a new token may carry, as Sanctum 4's createToken takes one: in the future and
   * no later than the global lifetime (SANCTUM_EXPIRATION) allows a token made now; 422 on
   * `expires_at` otherwise. Checked before the token is made (and, on the API, before the sign-in).
   */
  ownExpiry(request: ExpiryRequest, now = Date.now()): Date {
    const result = ownExpiry(request, now, this.config.tokenExpirationMinutes);
    if (typeof result !== 'number') throw invalid({ expires_at: [result] });
    return new Date(result);
  }

  /** When the global lifetime of a token made now ends (ms since the epoch), or null without one. */
  tokenLifetimeEnd(now = Date.now()): number | null {
    return lifetimeEnd(now, this.config.tokenExpirationMinutes);
  }

  /**
   * Creates a token for the user and returns its plaintext, which is never stored. `expiresAt`:
   * its own expiry, checked by ownExpiry(); without it, the global lifetime's end, if any.
   */
  async issue(userId: number, name: string, abilities: readonly string[] = ['*'], expiresAt: Date | null = null): Promise<{ plaintext: string; id: number }> {
    const secret = generateSecret(this.config.tokenPrefix);
    const now = new Date();
    const minutes = this.config.tokenExpirationMinutes;
    const row = await this.db.kysely
      .insertInto('personal_access_tokens')
      .values({
        user_id: userId,
        name,
        token: hashSecret(secret),
        abilities: JSON.stringify(abilities),
        last_used_at: null,
        expires_at: expiresAt !== null ? expiresAt.toISOString() : minutes === null ? null : new Date(now.getTime() + minutes * 60_000).toISOString(),
        created_at: now.toISOString(),
        updated_at: now.toISOString(),
      })
      .returning('id')
      .executeTakeFirstOrThrow();
    return { plaintext: `${row.id}|${secret}`, id: row.id };
  }

  /**
   * The caller a token authenticates, or null when it is unknown, wrong or expired (or the
   * credentials are null: a malformed token). Answers at once when the lookup does and no
   * last use is due to be written.
   */
  authenticate(credentials: TokenCredentials | null): MaybePromise<AuthenticatedToken | null> {
    if (credentials === null) return null;
    return then(this.findToken(credentials.id), (found) => this.check(found, credentials.secret));
  }

  private check(found: FoundToken | undefined, secret: string): MaybePromise<AuthenticatedToken | null> {
    if (found === undefined) return null;
    // The stored digest is compared in constant time, so response timing does not reveal how
    // much of a guessed secret was right.
    if (!sameDigest(found.digest, secretDigest(secret))) return null;
    const now = Date.now();
    // The expiry is checked on every request, so a token found earlier holds until its time.
    if (found.expiresAt !== null && found.expiresAt <= now) return null;
    if (found.lastUsedAt !== null && now - found.lastUsedAt < LAST_USED_RESOLUTION_MS) return found.authenticated;
    return this.touch(found.tokenId, now).then(() => {
      // The found token now says what the row says, so the next request within the minute
      // (given the same object) does not write again.
      found.lastUsedAt = now;
      return found.authenticated;
    });
  }

  /**
   * Writes the token's last use; never rejects. Awaited, once a minute per token, so a token list
   * read after a request shows it; a failure is logged and dropped, never the request's.
   */
  private async touch(tokenId: number, now: number): Promise<void> {
    const cutoff = new Date(now - LAST_USED_RESOLUTION_MS).toISOString();
    // The condition makes concurrent requests of one token write once, not once each.
    await this.db.kysely
      .updateTable('personal_access_tokens')
      .set({ last_used_at: new Date(now).toISOString() })
      .where('id', '=', tokenId)
      .where((eb) => eb.or([eb('last_used_at', 'is', null), eb('last_used_at', '<', cutoff)]))
      .execute()
      .then(
        () => undefined,
        (error: unknown) => bookkeepingFailed(this.db, 'token last use', error),
      );
  }

  /** Deletes one token. */
  async revoke(tokenId: number): Promise<void> {
    await this.db.kysely.deleteFrom('personal_access_tokens').where('id', '=', tokenId).execute();
  }

  /** Deletes every token of the user, except `keepTokenId` when given. */
  async revokeAll(userId: number, keepTokenId?: number): Promise<number> {
    let query = this.db.kysely.deleteFrom('personal_access_tokens').where('user_id', '=', userId);
    if (keepTokenId !== undefined) query = query.where('id', '!=', keepTokenId);
    const result = await query.executeTakeFirst();
    return Number(result.numDeletedRows);
  }

  /** Deletes the user's tokens with this name (Sanctum's "revoke by device"), no endpoint. */
  async revokeByName(userId: number, name: string): Promise<number> {
    const result = await this.db.kysely
      .deleteFrom('personal_access_tokens')
      .where('user_id', '=', userId)
      .where('name', '=', name)
      .executeTakeFirst();
    return Number(result.numDeletedRows);
  }

  /** The user's own tokens, newest first, as their owner may see them: never the hash. */
  async listForUser(userId: number, now = Date.now()): Promise<UserToken[]> {
    const rows = await this.tokensOfUser(userId);
    return rows.map((row) => this.present(row, now));
  }

  /** One of the user's tokens; undefined when there is none with this id or it is someone else's. */
  async findForUser(userId: number, tokenId: number, now = Date.now()): Promise<UserToken | undefined> {
    const row = await ownedBy(this.db.kysely, userId).where('id', '=', tokenId).executeTakeFirst();
    return row === undefined ? undefined : this.present(row, now);
  }

  /** Deletes one of the user's tokens; false when the user has no token with this id. */
  async revokeForUser(userId: number, tokenId: number): Promise<boolean> {
    // The owner is part of the condition, so another user's id deletes nothing.
    const result = await this.db.kysely
      .deleteFrom('personal_access_tokens')
      .where('id', '=', tokenId)
      .where('user_id', '=', userId)
      .executeTakeFirst();
    return Number(result.numDeletedRows) > 0;
  }

  // An allowlist of columns, with the expiry that actually applies (own expires_at or the
  // global lifetime counted from creation, whichever comes first).
  private present(row: Omit<UserToken, 'abilities' | 'expired'> & { abilities: string }, now: number): UserToken {
    const expires = effectiveExpiry(row.created_at, row.expires_at, this.config.tokenExpirationMinutes);
    return {
      id: row.id,
      name: row.name,
      abilities: parseAbilities(row.abilities),
      created_at: row.created_at,
      last_used_at: row.last_used_at,
      expires_at: expires === null ? null : new Date(expires).toISOString(),
      expired: expires !== null && expires <= now,
    };
  }

  /**
   * Deletes tokens that expired more than `hours` ago: by expires_at, and by age when a global
   * expiration is configured. Returns how many were deleted.
   */
  async prune(hours = 0): Promise<number> {
    const now = Date.now();
    const cutoff = new Date(now - hours * 3_600_000).toISOString();
    let deleted = Number(
      (await this.db.kysely.deleteFrom('personal_access_tokens').where('expires_at', '<=', cutoff).executeTakeFirst()).numDeletedRows,
    );
    const minutes = this.config.tokenExpirationMinutes;
    if (minutes !== null) {
      const createdBefore = new Date(now - minutes * 60_000 - hours * 3_600_000).toISOString();
      deleted += Number(
        (await this.db.kysely.deleteFrom('personal_access_tokens').where('created_at', '<=', createdBefore).executeTakeFirst())
          .numDeletedRows,
      );
    }
    // SQLite's WAL keeps the size the delete gave it (59 MB after 100,000 tokens, while the
    // service ran): truncated here. The database file keeps its size; tokens:prune --vacuum.
    if (deleted > 0) truncateWal(this.db);
    return deleted;
  }
}
