// Email verification as Laravel does it: a signed link /email/verify/{id}/{sha1(email)} that
// expires after VERIFY_LINK_MINUTES. The signature proves the link came from us; the id and
// hash must also match the logged-in user and the address they have now, so a link mailed to
// an old address verifies nothing after an email change.
import { createHash, timingSafeEqual } from 'node:crypto';
import type { Config } from '../../config.js';
import type { Db } from '../../db/connect.js';
import type { User } from '../../db/types.js';
import { t } from '../i18n/translator.js';
import type { MailService } from '../mail/mail.service.js';
import { deriveKey } from '../shared/keys.js';
import { AppError } from '../shared/errors.js';
import { updateUser } from '../users/users.repository.js';
import { checkSignature, signedUrl } from './signed-url.js';

export const VERIFY_LINK_MINUTES = 60;

type Verifiable = Pick<User, 'id' | 'email' | 'email_verified_at' | 'locale'>;

/** Laravel's verification hash: SHA-1 hex of the address as stored. */
export function emailHash(email: string): string {
  return createHash('sha1').update(email).digest('hex');
}

function sameText(a: string, b: string): boolean {
  const left = Buffer.from(a, 'utf8');
  const right = Buffer.from(b, 'utf8');
  return left.length === right.length && timingSafeEqual(left, right);
}

export class EmailVerificationService {
  private readonly key: Buffer;

  constructor(
    private readonly db: Db,
    private readonly mail: MailService,
    private readonly config: Pick<Config, 'appUrl' | 'appKey'>,
    private readonly clock: () => number = Date.now,
  ) {
    this.key = deriveKey(config.appKey, 'signed-urls');
  }

  /** A fresh signed link for the user's current address. */
  verificationUrl(user: Pick<User, 'id' | 'email'>): string {
    const expires = new Date(this.clock() + VERIFY_LINK_MINUTES * 60_000);
    return signedUrl(this.key, this.config.appUrl, `/email/verify/${user.id}/${emailHash(user.email)}`, expires);
  }

  /**
   * Tells the owner of an address that someone tried to register with it (the visitor was given
   * the answer of a new registration, so that the page does not reveal the account exists).
   */
  sendAccountExists(user: Verifiable, locale: string): void {
    const lang = user.locale ?? locale;
    this.mail.notify(user.email, lang, {
      subject: t(lang, 'mail.account_exists.subject'),
      intro: [t(lang, 'mail.account_exists.intro')],
      action: { text: t(lang, 'mail.account_exists.action'), url: `${this.config.appUrl}/forgot-password` },
      outro: [t(lang, 'mail.account_exists.ignore')],
    });
  }

  /** Mails a verification link in the background. */
  send(user: Verifiable, locale: string): void {
    const lang = user.locale ?? locale;
    this.mail.notify(user.email, lang, {
      subject: t(lang, 'mail.verify.subject'),
      intro: [t(lang, 'mail.verify.intro')],
      action: { text: t(lang, 'mail.verify.action'), url: this.verificationUrl(user) },
      outro: [t(lang, 'mail.verify.expire', { count: VERIFY_LINK_MINUTES }), t(lang, 'mail.verify.ignore')],
    });
  }

  /**
   * Marks the address verified when the link (its path with query) is signed, unexpired and
   * names this user and this address; 403 otherwise. Returns false when it already was.
   */
  async verify(user: Verifiable, params: { id: string; hash: string }, pathWithQuery: string, locale: string): Promise<boolean> {
    const forbidden = (key: string) => new AppError(403, t(locale, key));
    const signature = checkSignature(this.key, this.config.appUrl, pathWithQuery, this.clock());
    if (signature === 'expired') throw forbidden('verification.expired');
    if (signature !== 'valid') throw forbidden('verification.invalid');
    if (params.id !== String(user.id) || !sameText(params.hash, emailHash(user.email))) throw forbidden('verification.invalid');
    if (user.email_verified_at !== null) return false;
    const now = new Date(this.clock()).toISOString();
    await updateUser(this.db.kysely, user.id, { email_verified_at: now, updated_at: now });
    return true;
  }
}
