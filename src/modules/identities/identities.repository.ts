// The identities table: an account's links to OpenID Connect providers. Plain functions of a
// Kysely handle (or a transaction).
import type { Kysely } from 'kysely';
import type { Database, Identity } from '../../db/types.js';

type Q = Kysely<Database>;

/** The identity of this subject at this provider, whoever owns it. */
export function findIdentity(db: Q, provider: string, subject: string): Promise<Identity | undefined> {
  return db.selectFrom('identities').selectAll().where('provider', '=', provider).where('subject', '=', subject).executeTakeFirst();
}

/** The user's identities, oldest first. */
export function identitiesOf(db: Q, userId: number): Promise<Identity[]> {
  return db.selectFrom('identities').selectAll().where('user_id', '=', userId).orderBy('id').execute();
}

export function insertIdentity(db: Q, identity: { userId: number; provider: string; subject: string; email: string | null }, now: string): Promise<Identity> {
  return db
    .insertInto('identities')
    .values({ user_id: identity.userId, provider: identity.provider, subject: identity.subject, email: identity.email, created_at: now, last_used_at: now })
    .returningAll()
    .executeTakeFirstOrThrow();
}

export async function touchIdentity(db: Q, id: number, now: string): Promise<void> {
  await db.updateTable('identities').set({ last_used_at: now }).where('id', '=', id).execute();
}

/** Removes the user's links to a provider; how many went. */
export async function deleteIdentities(db: Q, userId: number, provider: string): Promise<number> {
  const result = await db.deleteFrom('identities').where('user_id', '=', userId).where('provider', '=', provider).executeTakeFirst();
  return Number(result.numDeletedRows);
}

/**
 * The ways the user can sign in: a password, each passkey, each identity of a provider in
 * `providers` (the configured ones: a link to a provider since removed opens nothing). Read in the
 * caller's transaction, after it locked the user's row, so two removals cannot both see "one more left".
 */
export async function waysIn(db: Q, userId: number, providers: readonly string[]): Promise<{ password: boolean; passkeys: number; identities: number }> {
  const user = await db.selectFrom('users').select('password').where('id', '=', userId).executeTakeFirst();
  const passkeys = await db.selectFrom('passkeys').select((eb) => eb.fn.countAll().as('n')).where('user_id', '=', userId).executeTakeFirst();
  const identities = providers.length === 0 ? undefined : await db
    .selectFrom('identities')
    .select((eb) => eb.fn.countAll().as('n'))
    .where('user_id', '=', userId)
    .where('provider', 'in', providers)
    .executeTakeFirst();
  return { password: user?.password != null, passkeys: Number(passkeys?.n ?? 0), identities: Number(identities?.n ?? 0) };
}
