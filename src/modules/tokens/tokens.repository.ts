// The token lookup of every authenticated API request: the token and its user in one indexed
// query, prepared once, worked out into what the check needs.
import { statement, type Db } from '../../db/connect.js';
import type { AuthUser } from '../users/auth-user.js';
import { parseAbilities } from './abilities.js';
import { effectiveExpiry } from './expiry.js';
import { digestBytes } from './token-string.js';

/** What a validated token tells the rest of the app: the token and its user, no secrets. */
export type AuthenticatedToken = Readonly<{
  tokenId: number;
  abilities: readonly string[];
  user: Readonly<AuthUser>;
}>;

/** A stored token as the check reads it: its digest as bytes, its expiry and last use as times. */
export type FoundToken = {
  tokenId: number;
  digest: Buffer;
  /** When the token stops working (ms since the epoch), or null. */
  expiresAt: number | null;
  /** When last_used_at was last written (ms since the epoch), or null. */
  lastUsedAt: number | null;
  /** The caller a valid secret authenticates (frozen: one lookup may answer many requests). */
  authenticated: AuthenticatedToken;
};

type TokenWithUserRow = {
  token_id: number;
  token: string;
  abilities: string;
  last_used_at: string | null;
  expires_at: string | null;
  token_created_at: string;
} & AuthUser;

// A token by id, with its user: on every request with a token, built once per database.
const tokenWithUser = statement<{ id: number }, TokenWithUserRow>('token_with_user', (kysely, arg) =>
  kysely
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
    .where('t.id', '=', arg('id')),
);

/** Finds a token by id, with its user; undefined when there is none. */
export function tokenLookup(db: Db, lifetimeMinutes: number | null): (id: number) => Promise<FoundToken | undefined> {
  return async (id) => {
    const row = await tokenWithUser.first(db, { id });
    if (row === undefined) return undefined;
    const user: AuthUser = Object.freeze({
      id: row.id,
      name: row.name,
      email: row.email,
      email_verified_at: row.email_verified_at,
      is_admin: Number(row.is_admin),
      created_at: row.created_at,
      updated_at: row.updated_at,
    });
    return {
      tokenId: row.token_id,
      digest: digestBytes(row.token),
      // Sanctum semantics: the global expiration applies to a token's age (so lowering it
      // affects tokens already issued), and a per-token expires_at applies as well.
      expiresAt: effectiveExpiry(row.token_created_at, row.expires_at, lifetimeMinutes),
      lastUsedAt: row.last_used_at === null ? null : Date.parse(row.last_used_at),
      authenticated: Object.freeze({ tokenId: row.token_id, abilities: Object.freeze(parseAbilities(row.abilities)), user }),
    };
  };
}
