// Accounts and their OpenID Connect identities: signing in with one (finding the account, or
// making one for a subject never seen), linking one to a signed-in account, unlinking. Which
// provider proved the subject, and how, is modules/oidc's business; this module trusts the claims
// it is given, which only a verified ID token can supply.
import { sql, type Kysely } from 'kysely';
import { writeTransaction, type Db } from '../../db/connect.js';
import { isUniqueViolation } from '../../db/errors.js';
import type { Database, Identity, User } from '../../db/types.js';
import { emailTaken, findUserById, insertUser } from '../users/users.repository.js';
import { deleteIdentities, findIdentity, identitiesOf, insertIdentity, touchIdentity, waysIn } from './identities.repository.js';

/** What a verified ID token says about the person (modules/oidc reads it). */
export type ProviderClaims = {
  provider: string;
  subject: string;
  email: string | null;
  /** True only when the provider said `email_verified: true`. */
  emailVerified: boolean;
  name: string | null;
};

export type ProviderSignIn =
  | { kind: 'signed-in'; user: User }
  | { kind: 'created'; user: User }
  /** An account already has the email: never linked silently (its owner links from /security). */
  | { kind: 'email-taken' }
  /** The provider gave no email: no account can be made. */
  | { kind: 'no-email' };

export type LinkResult = 'linked' | 'already-linked' | 'linked-elsewhere';

export class LastWayInError extends Error {
  constructor() {
    super('The last way to sign in to an account cannot be removed.');
  }
}

const NAME_MAX = 255;

export class IdentityService {
  constructor(
    private readonly db: Db,
    /** The providers of OIDC_PROVIDERS: only a link to one of them is a way in. */
    private readonly providers: readonly string[],
  ) {}

  /**
   * The account of a provider's subject: the one linked to it, else a new account with the
   * claims' name and email (verified only when the provider said so) and no password. A subject
   * never seen whose email an account already has gets nothing: linking it would hand that
   * account to whoever controls the provider's account (which may not even own the address).
   */
  async signIn(claims: ProviderClaims): Promise<ProviderSignIn> {
    const known = await this.known(claims);
    if (known !== undefined) return { kind: 'signed-in', user: known };
    const email = claims.email?.trim() ?? '';
    if (email === '' || email.length > NAME_MAX) return { kind: 'no-email' };
    const now = new Date().toISOString();
    try {
      const user = await writeTransaction(this.db, async (trx) => {
        if (await emailTaken(trx, email)) return null;
        const created = await insertUser(trx, {
          name: displayName(claims, email),
          email,
          password: null,
          email_verified_at: claims.emailVerified ? now : null,
          is_admin: 0,
          remember_token: null,
          locale: null,
          created_at: now,
          updated_at: now,
        });
        await insertIdentity(trx, { userId: created.id, provider: claims.provider, subject: claims.subject, email }, now);
        return created;
      });
      return user === null ? { kind: 'email-taken' } : { kind: 'created', user };
    } catch (error) {
      if (!isUniqueViolation(error)) throw error;
      // Two callbacks of one subject at once: the other made the account. Else the email was taken meanwhile.
      const raced = await this.known(claims);
      return raced === undefined ? { kind: 'email-taken' } : { kind: 'signed-in', user: raced };
    }
  }

  /** Links the subject to the user; refused when it is another account's. */
  async link(userId: number, claims: ProviderClaims): Promise<LinkResult> {
    const existing = await findIdentity(this.db.kysely, claims.provider, claims.subject);
    if (existing !== undefined) return existing.user_id === userId ? 'already-linked' : 'linked-elsewhere';
    try {
      await insertIdentity(this.db.kysely, { userId, provider: claims.provider, subject: claims.subject, email: claims.email }, new Date().toISOString());
      return 'linked';
    } catch (error) {
      if (!isUniqueViolation(error)) throw error;
      const raced = await findIdentity(this.db.kysely, claims.provider, claims.subject);
      return raced?.user_id === userId ? 'already-linked' : 'linked-elsewhere';
    }
  }

  /**
   * Removes the user's link to a provider; LastWayInError when nothing else would let them in
   * (no password, no passkey, no other identity). The user's row is locked first (PostgreSQL;
   * SQLite's write transaction holds the whole database), so two removals at once cannot each
   * leave the other as the last one and both go.
   */
  async unlink(userId: number, provider: string): Promise<boolean> {
    return writeTransaction(this.db, async (trx) => {
      await lockUser(this.db, trx, userId);
      const { linked, left } = await waysLeft(trx, userId, provider, this.providers);
      if (linked === 0) return false;
      if (left < 1) throw new LastWayInError();
      return (await deleteIdentities(trx, userId, provider)) > 0;
    });
  }

  /** Whether this subject at this provider is the user's (a provider's confirmation of who is signed in). */
  async belongsTo(userId: number, claims: Pick<ProviderClaims, 'provider' | 'subject'>): Promise<boolean> {
    const identity = await findIdentity(this.db.kysely, claims.provider, claims.subject);
    return identity?.user_id === userId;
  }

  listFor(userId: number): Promise<Identity[]> {
    return identitiesOf(this.db.kysely, userId);
  }

  /** Whether removing this provider would leave the user no way in (the page hides the button). */
  async isLastWayIn(userId: number, provider: string): Promise<boolean> {
    return (await waysLeft(this.db.kysely, userId, provider, this.providers)).left < 1;
  }

  /** Whether the user's passkey is their only way in, so it cannot be removed (the page hides the button). */
  async passkeyIsLastWayIn(userId: number): Promise<boolean> {
    return onlyAPasskeyLeft(await waysIn(this.db.kysely, userId, this.providers));
  }

  private async known(claims: ProviderClaims): Promise<User | undefined> {
    const identity = await findIdentity(this.db.kysely, claims.provider, claims.subject);
    if (identity === undefined) return undefined;
    await touchIdentity(this.db.kysely, identity.id, new Date().toISOString());
    return findUserById(this.db.kysely, identity.user_id);
  }
}

/** Locks the user's row until the transaction ends (PostgreSQL; SQLite's write transaction holds the database). */
async function lockUser(db: Db, trx: Kysely<Database>, userId: number): Promise<void> {
  if (db.dialect === 'postgres') await sql`select id from users where id = ${userId} for update`.execute(trx);
}

/**
 * Runs `remove` (a passkey's removal) in a transaction that first makes sure it leaves the user a
 * way in: LastWayInError when the user has no password, no identity of a configured provider
 * (`providers`) and no other passkey.
 */
export async function removePasskeyKeepingAWayIn(db: Db, userId: number, providers: readonly string[], remove: (trx: Kysely<Database>) => Promise<boolean>): Promise<boolean> {
  return writeTransaction(db, async (trx) => {
    await lockUser(db, trx, userId);
    if (onlyAPasskeyLeft(await waysIn(trx, userId, providers))) {
      // Tried, then undone by the throw (the transaction rolls back): an id that is not the
      // user's deletes nothing and stays a plain "no such passkey".
      const removed = await remove(trx);
      if (removed) throw new LastWayInError();
      return false;
    }
    return remove(trx);
  });
}

/** No password, no provider and at most one passkey: that passkey is the last way in. */
function onlyAPasskeyLeft(ways: { password: boolean; passkeys: number; identities: number }): boolean {
  return !ways.password && ways.identities === 0 && ways.passkeys <= 1;
}

/**
 * How many of the user's links are to this provider, and how many ways in stay without them (a
 * link to a provider not in `providers` is none: it opens nothing).
 */
async function waysLeft(db: Kysely<Database>, userId: number, provider: string, providers: readonly string[]): Promise<{ linked: number; left: number }> {
  const ways = await waysIn(db, userId, providers);
  const linked = (await identitiesOf(db, userId)).filter((identity) => identity.provider === provider).length;
  return { linked, left: (ways.password ? 1 : 0) + ways.passkeys + ways.identities - (providers.includes(provider) ? linked : 0) };
}

/** The claims' name, else the email's local part; one line, at most 255 characters. */
function displayName(claims: ProviderClaims, email: string): string {
  const name = (claims.name ?? '').replace(/\s+/g, ' ').trim();
  return [...(name === '' ? email.split('@')[0] ?? email : name)].slice(0, NAME_MAX).join('');
}
