// Password reset by emailed link. The token is 32 random bytes, stored only as its SHA-256 (one
// row per address), valid RESET_TOKEN_MINUTES and single use. Asking for a link answers the
// same whether or not the address has an account; at most one mail per address per
// RESEND_SECONDS. A reset ends every session, remembered device and API token of the user; on
// an account whose address was never verified it also removes every other way in (takeBack).
import { randomBytes } from 'node:crypto';
import type { Config } from '../../config.js';
import { writeTransaction, type Db } from '../../db/connect.js';
import type { User } from '../../db/types.js';
import { t } from '../i18n/translator.js';
import type { MailService } from '../mail/mail.service.js';
import { checkNewPassword } from '../passwords/policy.js';
import { ValidationError } from '../shared/errors.js';
import { digestBytes, hashSecret, sameDigest, secretDigest } from '../tokens/token-string.js';
import type { UserService } from '../users/users.service.js';

export const RESET_TOKEN_MINUTES = 60;
export const RESEND_SECONDS = 60;

export type ResetDeps = {
  users: UserService;
  mail: MailService;
  /** Ends every session, remembered device and API token of a user (AuthService.signOutEverywhere). */
  signOutEverywhere(userId: number): Promise<void>;
};

export type ResetInput = { token: string; email: string; password: string; password_confirmation?: string };

export class PasswordResetService {
  constructor(
    private readonly db: Db,
    private readonly deps: ResetDeps,
    private readonly config: Pick<Config, 'appUrl'>,
    private readonly clock: () => number = Date.now,
  ) {}

  /**
   * Mails a reset link when an account has this address, else does nothing; the caller answers
   * the same either way. The mail leaves in the background (see MailService.dispatch).
   */
  async requestLink(email: string, locale: string): Promise<void> {
    const user = await this.deps.users.findByEmail(email);
    if (user === undefined) return;
    const token = randomBytes(32).toString('base64url');
    const now = this.clock();
    const createdAt = new Date(now).toISOString();
    const resendAfter = new Date(now - RESEND_SECONDS * 1000).toISOString();
    // One statement decides, even for concurrent requests: a row is written (and a mail sent)
    // only when the address has no token, or one older than the resend interval.
    const written = await this.db.kysely
      .insertInto('password_reset_tokens')
      .values({ email: user.email.toLowerCase(), token: hashSecret(token), created_at: createdAt })
      .onConflict((oc) =>
        oc
          .column('email')
          .doUpdateSet({ token: hashSecret(token), created_at: createdAt })
          .where('password_reset_tokens.created_at', '<=', resendAfter),
      )
      .returning('email')
      .executeTakeFirst();
    if (written === undefined) return;
    this.sendLink(user, token, user.locale ?? locale);
  }

  /** The link in the mail: {APP_URL}/reset-password/{token}?email=… */
  resetUrl(token: string, email: string): string {
    return `${this.config.appUrl}/reset-password/${encodeURIComponent(token)}?${new URLSearchParams({ email }).toString()}`;
  }

  /**
   * Sets the new password when the token matches the address and is fresh; the token is used up
   * and the user is signed out everywhere. 422 on `password` for a weak password, on `email` for
   * a bad, used or expired token (one message for an unknown address and a wrong token).
   */
  async reset(input: ResetInput, locale: string): Promise<User> {
    const errors = checkNewPassword(input.password, input.password_confirmation, locale);
    if (Object.keys(errors).length > 0) throw new ValidationError(errors);
    const invalid = () => new ValidationError({ email: [t(locale, 'passwords.token')] });
    const key = input.email.toLowerCase();
    const row = await this.db.kysely.selectFrom('password_reset_tokens').selectAll().where('email', '=', key).executeTakeFirst();
    if (row === undefined || !sameDigest(digestBytes(row.token), secretDigest(input.token))) throw invalid();
    if (Date.parse(row.created_at) + RESET_TOKEN_MINUTES * 60_000 <= this.clock()) {
      await this.db.kysely.deleteFrom('password_reset_tokens').where('email', '=', key).execute();
      throw new ValidationError({ email: [t(locale, 'passwords.expired')] });
    }
    const user = await this.deps.users.findByEmail(input.email);
    if (user === undefined) throw invalid();
    // Used up before the password changes: of two requests racing with one token, one deletes
    // the row and goes on, the other finds nothing to delete and stops.
    const used = await this.db.kysely.deleteFrom('password_reset_tokens').where('email', '=', key).where('token', '=', row.token).executeTakeFirst();
    if (Number(used.numDeletedRows) !== 1) throw invalid();
    if (user.email_verified_at === null) await this.takeBack(user.id);
    await this.deps.users.setPassword(user.id, input.password);
    // Whoever knew the old password (or held a session or token made with it) is out.
    await this.deps.signOutEverywhere(user.id);
    return user;
  }

  /**
   * The link proved the address of an account whose address was never verified. Whoever made
   * that account may not own the address: a provider account claiming it unverified, or a
   * registration with a password (a pre-account takeover). What they could have set while
   * holding it goes, so that the owner gets the account alone: the provider identities, the
   * passkeys and a two-factor sign-in (its secret is theirs). The sessions, remembered devices,
   * API tokens and a pending email change end with the reset's sign-out everywhere; the password
   * is the owner's new one. The address counts as verified from now on: the link proved it.
   */
  private async takeBack(userId: number): Promise<void> {
    const now = new Date(this.clock()).toISOString();
    await writeTransaction(this.db, async (trx) => {
      await trx.deleteFrom('identities').where('user_id', '=', userId).execute();
      await trx.deleteFrom('passkeys').where('user_id', '=', userId).execute();
      await trx
        .updateTable('users')
        .set({ two_factor_secret: null, two_factor_confirmed_at: null, two_factor_recovery_codes: null, two_factor_last_step: null, email_verified_at: now, updated_at: now })
        .where('id', '=', userId)
        .execute();
    });
  }

  /** Deletes tokens past their lifetime; returns how many. */
  async prune(): Promise<number> {
    const cutoff = new Date(this.clock() - RESET_TOKEN_MINUTES * 60_000).toISOString();
    const result = await this.db.kysely.deleteFrom('password_reset_tokens').where('created_at', '<=', cutoff).executeTakeFirst();
    return Number(result.numDeletedRows);
  }

  private sendLink(user: User, token: string, locale: string): void {
    this.deps.mail.notify(user.email, locale, {
      subject: t(locale, 'mail.reset.subject'),
      intro: [t(locale, 'mail.reset.intro')],
      action: { text: t(locale, 'mail.reset.action'), url: this.resetUrl(token, user.email) },
      outro: [t(locale, 'mail.reset.expire', { count: RESET_TOKEN_MINUTES }), t(locale, 'mail.reset.ignore')],
    });
  }
}
