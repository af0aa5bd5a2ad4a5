// Safe email changes: a new address takes effect only once its owner follows the link mailed to
// it, and the old address is told, with a link that cancels the change. One pending change per
// account (email_changes.user_id is unique): a new request replaces the older one. Both links
// carry a random token of which only the SHA-256 is stored, compared in constant time.
import type { Config } from '../../config.js';
import { isUniqueViolation } from '../../db/errors.js';
import { statement, writeTransaction, type Db } from '../../db/connect.js';
import type { Selectable } from 'kysely';
import type { EmailChangesTable, User } from '../../db/types.js';
import type { MaybePromise } from '../../lib/maybe-promise.js';
import { t } from '../i18n/translator.js';
import type { MailService } from '../mail/mail.service.js';
import { invalid } from '../shared/errors.js';
import { digestBytes, hashSecret, randomAlphanumeric, sameDigest, secretDigest } from '../tokens/token-string.js';
import { TAKEN_EMAIL } from '../users/users.service.js';
import { emailTaken, findUserById, updateUser } from '../users/users.repository.js';

// Laravel's verification links expire after 60 minutes (auth.verification.expire); the link
// that proves the new address is one of them, and the cancel link lives as long.
export const EMAIL_CHANGE_MINUTES = 60;

const TOKEN_LENGTH = 40;

export type PendingEmailChange = { id: number; newEmail: string; expiresAt: Date };

/** What a link's page may show: the change it names, or why there is none. */
export type LinkState = { state: 'valid'; change: PendingEmailChange } | { state: 'invalid' } | { state: 'expired' };

type Row = Selectable<EmailChangesTable>;

const toDate = (value: string) => new Date(value);

const pendingOfUser = statement<{ userId: number }, Row>('email_change_of_user', (kysely, arg) =>
  kysely.selectFrom('email_changes').selectAll().where('user_id', '=', arg('userId')),
);

/** A user's email_changes row, expired or not, or none: in an object, so that "none" can be kept too. */
export type PendingRowRead = (userId: number) => MaybePromise<{ row: Row | undefined }>;

/** Reads a user's email_changes row (services.ts hands the service a kept one). */
export function pendingRows(db: Db): PendingRowRead {
  return async (userId) => ({ row: await pendingOfUser.first(db, { userId }) });
}

export class EmailChangeService {
  private readonly pendingRow: PendingRowRead;

  constructor(
    private readonly db: Db,
    private readonly mail: MailService,
    private readonly config: Pick<Config, 'appUrl'>,
    private readonly clock: () => number = Date.now,
    pendingRow?: PendingRowRead,
  ) {
    this.pendingRow = pendingRow ?? pendingRows(db);
  }

  /** The user's change waiting for its link, if any and not expired. */
  async pending(userId: number): Promise<PendingEmailChange | null> {
    const { row } = await this.pendingRow(userId);
    if (row === undefined || toDate(row.expires_at).getTime() <= this.clock()) return null;
    return { id: row.id, newEmail: row.new_email, expiresAt: toDate(row.expires_at) };
  }

  /**
   * Starts a change to `newEmail` (the caller checked a fresh password confirmation): replaces
   * any older pending change, mails the confirmation link to the new address and a notice with
   * a cancel link to the current one. 422 on `email` when the address is another account's.
   * Returns false when the address is the current one (nothing to change).
   */
  async request(user: Pick<User, 'id' | 'email' | 'locale'>, newEmail: string, locale: string): Promise<boolean> {
    if (newEmail === user.email) return false;
    if (await emailTaken(this.db.kysely, newEmail, user.id)) throw invalid({ email: [TAKEN_EMAIL] });
    const token = randomAlphanumeric(TOKEN_LENGTH);
    const cancelToken = randomAlphanumeric(TOKEN_LENGTH);
    const now = this.clock();
    const id = await writeTransaction(this.db, async (trx) => {
      await trx.deleteFrom('email_changes').where('user_id', '=', user.id).execute();
      const row = await trx
        .insertInto('email_changes')
        .values({
          user_id: user.id,
          new_email: newEmail,
          token_hash: hashSecret(token),
          cancel_token_hash: hashSecret(cancelToken),
          expires_at: new Date(now + EMAIL_CHANGE_MINUTES * 60_000).toISOString(),
          created_at: new Date(now).toISOString(),
        })
        .returning('id')
        .executeTakeFirstOrThrow();
      return row.id;
    });
    const lang = user.locale ?? locale;
    const base = this.config.appUrl;
    this.mail.notify(newEmail, lang, {
      subject: t(lang, 'account_mail.email_change.confirm.subject'),
      intro: [t(lang, 'account_mail.email_change.confirm.intro', { email: newEmail })],
      action: { text: t(lang, 'account_mail.email_change.confirm.action'), url: `${base}/email/change/${id}/${token}` },
      outro: [t(lang, 'account_mail.email_change.expire', { count: EMAIL_CHANGE_MINUTES }), t(lang, 'account_mail.email_change.confirm.ignore')],
    });
    this.mail.notify(user.email, lang, {
      subject: t(lang, 'account_mail.email_change.notice.subject'),
      intro: [t(lang, 'account_mail.email_change.notice.intro', { email: newEmail }), t(lang, 'account_mail.email_change.notice.cancel')],
      action: { text: t(lang, 'account_mail.email_change.notice.action'), url: `${base}/email/change/${id}/cancel/${cancelToken}` },
      outro: [t(lang, 'account_mail.email_change.expire', { count: EMAIL_CHANGE_MINUTES }), t(lang, 'account_mail.email_change.notice.password')],
    });
    return true;
  }

  /** What the link (the pending change `id`, `token` from the mail) names, for its page. */
  async check(id: number, token: string, kind: 'confirm' | 'cancel'): Promise<LinkState> {
    const row = await this.find(id, token, kind);
    if (row === null) return { state: 'invalid' };
    if (toDate(row.expires_at).getTime() <= this.clock()) return { state: 'expired' };
    return { state: 'valid', change: { id: row.id, newEmail: row.new_email, expiresAt: toDate(row.expires_at) } };
  }

  /**
   * Follows a confirmation link: sets the new address, verified (following the link proved it),
   * and ends the pending change. The address must still be free: another account may have
   * taken it since the request (422 on `email`, and the change stays pending). Returns the
   * user's id, or the link's state when it is not valid.
   */
  async confirm(id: number, token: string): Promise<{ state: 'done'; userId: number } | { state: 'invalid' } | { state: 'expired' }> {
    const row = await this.find(id, token, 'confirm');
    if (row === null) return { state: 'invalid' };
    if (toDate(row.expires_at).getTime() <= this.clock()) return { state: 'expired' };
    const now = new Date(this.clock()).toISOString();
    try {
      return await writeTransaction(this.db, async (trx) => {
        if (await emailTaken(trx, row.new_email, row.user_id)) throw invalid({ email: [TAKEN_EMAIL] });
        // Deleting by id and token hash makes the link good once, even with two clicks at once.
        const ended = await trx.deleteFrom('email_changes').where('id', '=', row.id).where('token_hash', '=', row.token_hash).executeTakeFirst();
        if (ended.numDeletedRows === 0n) return { state: 'invalid' as const };
        if ((await findUserById(trx, row.user_id)) === undefined) return { state: 'invalid' as const };
        await updateUser(trx, row.user_id, { email: row.new_email, email_verified_at: now, updated_at: now });
        return { state: 'done' as const, userId: row.user_id };
      });
    } catch (error) {
      if (isUniqueViolation(error)) throw invalid({ email: [TAKEN_EMAIL] });
      throw error;
    }
  }

  /** Follows a cancel link: the pending change is gone when the link is valid; its state either way. */
  async cancel(id: number, token: string): Promise<LinkState['state']> {
    const state = await this.check(id, token, 'cancel');
    if (state.state === 'valid') await this.db.kysely.deleteFrom('email_changes').where('id', '=', id).execute();
    return state.state;
  }

  /** Withdraws the user's own pending change (the button on the security page). */
  async withdraw(userId: number): Promise<void> {
    await this.db.kysely.deleteFrom('email_changes').where('user_id', '=', userId).execute();
  }

  // The row `id` when `token` is its confirmation (or cancel) token. The comparison of the
  // SHA-256 digests takes the same time wherever they differ.
  private async find(id: number, token: string, kind: 'confirm' | 'cancel'): Promise<Row | null> {
    if (!Number.isSafeInteger(id) || id < 1 || !/^[A-Za-z0-9]{40}$/.test(token)) return null;
    const row = await this.db.kysely.selectFrom('email_changes').selectAll().where('id', '=', id).executeTakeFirst();
    if (row === undefined) return null;
    const stored = kind === 'confirm' ? row.token_hash : row.cancel_token_hash;
    return sameDigest(secretDigest(token), digestBytes(stored)) ? row : null;
  }
}
