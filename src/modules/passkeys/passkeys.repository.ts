// The passkeys table: plain functions of the database. Ids and keys are stored as base64url
// text, as the browser reports them; nothing here is secret (a public key is public).
import { statement, type Db } from '../../db/connect.js';
import type { Database, PasskeysTable } from '../../db/types.js';
import type { Kysely, Selectable } from 'kysely';

export type PasskeyRow = Selectable<PasskeysTable>;

export type NewPasskey = {
  userId: number;
  name: string;
  credentialId: string;
  publicKey: string;
  counter: number;
  transports: readonly string[];
  backedUp: boolean;
};

const ofUser = statement<{ userId: number }, PasskeyRow>('passkeys_of_user', (kysely, arg) =>
  kysely.selectFrom('passkeys').selectAll().where('user_id', '=', arg('userId')).orderBy('created_at', 'desc').orderBy('id', 'desc'),
);

/** The user's passkeys, newest first. */
export function passkeysOf(db: Db, userId: number): Promise<PasskeyRow[]> {
  return ofUser.all(db, { userId });
}

/** How many passkeys the user has. */
export async function countPasskeys(db: Db, userId: number): Promise<number> {
  const row = await db.kysely.selectFrom('passkeys').select((eb) => eb.fn.countAll().as('n')).where('user_id', '=', userId).executeTakeFirst();
  return Number(row?.n ?? 0);
}

/** The passkey with this credential id (whoever owns it). */
export function passkeyByCredentialId(db: Db, credentialId: string): Promise<PasskeyRow | undefined> {
  return db.kysely.selectFrom('passkeys').selectAll().where('credential_id', '=', credentialId).executeTakeFirst();
}

/** Stores a new passkey and returns its row. */
export async function insertPasskey(db: Db, passkey: NewPasskey, now: Date): Promise<PasskeyRow> {
  return db.kysely
    .insertInto('passkeys')
    .values({
      user_id: passkey.userId,
      name: passkey.name,
      credential_id: passkey.credentialId,
      public_key: passkey.publicKey,
      counter: passkey.counter,
      transports: JSON.stringify(passkey.transports),
      backed_up: passkey.backedUp ? 1 : 0,
      created_at: now.toISOString(),
    })
    .returningAll()
    .executeTakeFirstOrThrow();
}

/**
 * Records a use, only if it moves the signature counter forward (a compare-and-set): false when
 * another use got there first with this counter or a higher one (two answers racing with the
 * same counter, a cloned authenticator), so the stored counter never moves backwards. An
 * authenticator without a counter reports 0 each time (WebAuthn: "not supported"): 0 is
 * recorded only over 0, so such a passkey keeps working and one that has counted cannot go back.
 */
export async function advancePasskeyCounter(db: Db, id: number, counter: number, backedUp: boolean, now: Date): Promise<boolean> {
  const result = await db.kysely
    .updateTable('passkeys')
    .set({ counter, backed_up: backedUp ? 1 : 0, last_used_at: now.toISOString() })
    .where('id', '=', id)
    .where('counter', counter === 0 ? '=' : '<', counter)
    .executeTakeFirst();
  return Number(result.numUpdatedRows) === 1;
}

/** Deletes one of the user's passkeys; false when the user has none with this id. */
export async function deletePasskey(db: Kysely<Database>, userId: number, id: number): Promise<boolean> {
  // The owner is part of the condition, so another user's id deletes nothing.
  const result = await db.deleteFrom('passkeys').where('id', '=', id).where('user_id', '=', userId).executeTakeFirst();
  return Number(result.numDeletedRows) > 0;
}
