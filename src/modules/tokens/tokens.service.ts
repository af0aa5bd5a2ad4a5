// Issuing, validating and revoking personal access tokens.
import type { Config } from '../../config.js';
import { prepare, type Db, type Prepared } from '../../db/connect.js';
import { ReadCache, type Held } from '../../db/read-cache.js';
import { ABILITIES, parseAbilities, type Ability } from './abilities.js';
import { effectiveExpiry } from './expiry.js';
import { digestBytes, generateSecret, hashSecret, parseToken, sameDigest, secretDigest } from './token-string.js';

/** What a validated token tells the rest of the app: the token and its user, no secrets. */
export type AuthenticatedToken = Readonly<{
  tokenId: number;
  abilities: readonly string[];
  user: Readonly<AuthUser>;
}>;

export type AuthUser = {
  id: number;
  name: string;
  email: string;
  email_verified_at: string | null;
  is_admin: number;
  created_at: string;
  updated_at: string;
};

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

type TokenWithUserRow = {
  token_id: number;
  token: string;
  abilities: string;
  last_used_at: string | null;
  expires_at: string | null;
  token_created_at: string;
} & AuthUser;

// last_used_at is written at most once a minute per token: a write per request would cost a
// third of the throughput of an authenticated read.
const LAST_USED_RESOLUTION_MS = 60_000;

/**
 * A token as the cache keeps it: what every request needs of its row, worked out once (the
 * stored digest as bytes, the expiry and last use as times), and what authenticate() answers
 * for it (frozen, shared).
 */
type CachedToken = {
  tokenId: number;
  digest: Buffer;
  /** When the token stops working (ms since the epoch), or null. */
  expiresAt: number | null;
  /**
   * When last_used_at was last written (ms since the epoch), or null. Moved forward once this
   * process writes it: that write alone does not drop the PostgreSQL cache (it changes nothing
   * a lookup answers with), so the kept token must know it is done.
   */
  lastUsedAt: number | null;
  authenticated: AuthenticatedToken;
};

export class TokenService {
  private readonly lookup: Prepared<TokenWithUserRow>;
  // Token lookups kept while the database is unchanged (db/read-cache.ts).
  private readonly cache: ReadCache<number, CachedToken>;

  constructor(
    private readonly db: Db,
    private readonly config: Pick<Config, 'tokenExpirationMinutes' | 'tokenPrefix'>,
  ) {
    // One statement, prepared once: the token and its user in a single indexed lookup.
    const query = db.kysely
      .selectFrom('personal_access_tokens as t')
      .innerJoin('users as u', 'u.id', 't.user_id')
      .select([
        't.id as token_id',
        't.token',
        't.abilities',
        't.last_used_at',
        't.expires_at',
        't.created_at as token_created_at',
        'u.id',
        'u.name',
        'u.email',
        'u.email_verified_at',
        'u.is_admin',
        'u.created_at',
        'u.updated_at',
      ])
      .where('t.id', '=', 0)
      .compile();
    this.lookup = prepare<TokenWithUserRow>(db, 'token_with_user', query);
    // About 1 KiB a token.
    this.cache = new ReadCache<number, CachedToken>(db.changes, 10_000);
  }

  /** Creates a token for the user and returns its plaintext, which is never stored. */
  async issue(userId: number, name: string, abilities: readonly string[] = ['*']): Promise<{ plaintext: string; id: number }> {
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
        expires_at: minutes === null ? null : new Date(now.getTime() + minutes * 60_000).toISOString(),
        created_at: now.toISOString(),
        updated_at: now.toISOString(),
      })
      .returning('id')
      .executeTakeFirstOrThrow();
    return { plaintext: `${row.id}|${secret}`, id: row.id };
  }

  /** Resolves a plaintext bearer token to its user, or null when it is malformed, unknown, wrong or expired. */
  async authenticate(plaintext: string): Promise<AuthenticatedToken | null> {
    const parsed = parseToken(plaintext, this.config.tokenPrefix);
    if (parsed === null) return null;
    const found = await this.cache.get(parsed.id, () => this.load(parsed.id));
    if (found === undefined) return null;
    const now = Date.now();
    const verdict = this.verdict(found, parsed.secret, now);
    if (verdict === 'touch') {
      await this.touch(found.tokenId, now);
      found.lastUsedAt = now;
      return found.authenticated;
    }
    return verdict;
  }

  /**
   * authenticate()'s answer when it needs neither the database nor a write: the token is kept
   * in the cache (db/read-cache.ts, checked for changes first) and its last use was recorded
   * within the minute. Undefined otherwise — the caller then awaits authenticate(). Every
   * authenticated API request asks this first: an answer at once saves the promises and
   * microtask turns of the asynchronous path.
   */
  authenticateKept(plaintext: string): AuthenticatedToken | null | undefined {
    const parsed = parseToken(plaintext, this.config.tokenPrefix);
    if (parsed === null) return null;
    const now = Date.now();
    const found = this.cache.peek(parsed.id, now);
    if (found === undefined) return undefined;
    const verdict = this.verdict(found, parsed.secret, now);
    return verdict === 'touch' ? undefined : verdict;
  }

  // The checks of a found token: its secret, its expiry, and whether its last use is due to be written.
  private verdict(found: CachedToken, secret: string, now: number): AuthenticatedToken | null | 'touch' {
    // The stored digest is compared in constant time, so response timing does not reveal how
    // much of a guessed secret was right.
    if (!sameDigest(found.digest, secretDigest(secret))) return null;
    if (found.expiresAt !== null && found.expiresAt <= now) return null;
    if (found.lastUsedAt === null || now - found.lastUsedAt >= LAST_USED_RESOLUTION_MS) return 'touch';
    return found.authenticated;
  }

  // The token's expiry is checked on every request, so a kept row holds until the next write.
  private async load(id: number): Promise<Held<CachedToken> | undefined> {
    const row = await this.lookup.first([id]);
    if (row === undefined) return undefined;
    // Frozen: one object may answer many requests, none of which may change it.
    const user: AuthUser = Object.freeze({
      id: row.id,
      name: row.name,
      email: row.email,
      email_verified_at: row.email_verified_at,
      is_admin: Number(row.is_admin),
      created_at: row.created_at,
      updated_at: row.updated_at,
    });
    const authenticated = Object.freeze({ tokenId: row.token_id, abilities: Object.freeze(parseAbilities(row.abilities)), user });
    const value: CachedToken = {
      tokenId: row.token_id,
      digest: digestBytes(row.token),
      // Sanctum semantics: the global expiration applies to a token's age (so lowering it
      // affects tokens already issued), and a per-token expires_at applies as well.
      expiresAt: effectiveExpiry(row.token_created_at, row.expires_at, this.config.tokenExpirationMinutes),
      lastUsedAt: row.last_used_at === null ? null : Date.parse(row.last_used_at),
      authenticated,
    };
    return { value, until: null };
  }

  private async touch(tokenId: number, now: number): Promise<void> {
    const cutoff = new Date(now - LAST_USED_RESOLUTION_MS).toISOString();
    // The condition makes concurrent requests of one token write once, not once each.
    await this.db.kysely
      .updateTable('personal_access_tokens')
      .set({ last_used_at: new Date(now).toISOString() })
      .where('id', '=', tokenId)
      .where((eb) => eb.or([eb('last_used_at', 'is', null), eb('last_used_at', '<', cutoff)]))
      .execute();
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
    const rows = await this.ownedBy(userId).orderBy('created_at', 'desc').orderBy('id', 'desc').execute();
    return rows.map((row) => this.present(row, now));
  }

  /** One of the user's tokens; undefined when there is none with this id or it is someone else's. */
  async findForUser(userId: number, tokenId: number, now = Date.now()): Promise<UserToken | undefined> {
    const row = await this.ownedBy(userId).where('id', '=', tokenId).executeTakeFirst();
    return row === undefined ? undefined : this.present(row, now);
  }

  // The columns an owner may see (not the hash), of the user's tokens only.
  private ownedBy(userId: number) {
    return this.db.kysely
      .selectFrom('personal_access_tokens')
      .select(['id', 'name', 'abilities', 'last_used_at', 'expires_at', 'created_at'])
      .where('user_id', '=', userId);
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
    return deleted;
  }
}
