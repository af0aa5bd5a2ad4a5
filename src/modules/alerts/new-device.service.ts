// New-device alerts: each sign-in (site, panel, API token issue) is noticed with the device's
// fingerprint (device.ts). A device the account has not signed in from before is recorded and
// the account is mailed (time, IP, device, a link to the security page), unless
// NEW_DEVICE_ALERTS=false. The first device of an account (its registration, or the first
// sign-in of an imported account) is recorded without a mail: there is nothing to compare with.
import type { Config } from '../../config.js';
import type { Db } from '../../db/connect.js';
import { bookkeepingFailed } from '../../db/outage-log.js';
import type { User } from '../../db/types.js';
import { formatDate } from '../i18n/formats.js';
import { t } from '../i18n/translator.js';
import type { MailService } from '../mail/mail.service.js';
import { mailSafeText } from './device.js';

export type SignInChannel = 'site' | 'panel' | 'api';

export type SignInNotice = {
  fingerprint: string;
  ip: string;
  /** How the device reads in the mail ("Firefox 133 / Ubuntu", from its user agent); null when unknown. */
  device: string | null;
  /** The name an API client gave its token (device_name), quoted in the mail. */
  deviceName?: string;
  channel: SignInChannel;
  /** The visitor's locale, when the user has saved none. */
  locale: string;
};

/**
 * The device as the alert writes it: what the client says about itself (its token's name, its
 * user agent) is an attacker's text, quoted as data (mailSafeText) in the text and HTML parts.
 */
function deviceInMail(notice: SignInNotice): string | null {
  const described = notice.device === null ? null : mailSafeText(notice.device);
  if (notice.deviceName === undefined) return described;
  const name = `“${mailSafeText(notice.deviceName)}”`;
  return described === null ? name : `${name} (${described})`;
}

export class NewDeviceService {
  constructor(
    private readonly db: Db,
    private readonly mail: MailService,
    private readonly config: Pick<Config, 'appUrl' | 'newDeviceAlerts'>,
    private readonly clock: () => number = Date.now,
  ) {}

  /**
   * Notices a sign-in in the background: the work (and the mail) runs after the answer has gone,
   * so a slow or failing database or mail server never delays or fails a sign-in. The device's
   * row is bookkeeping: a write that fails (a full disk) is logged with the database's other
   * failures (once per kind and interval) and dropped.
   */
  notice(user: Pick<User, 'id' | 'email' | 'locale'>, notice: SignInNotice): void {
    this.mail.defer('new-device notice', () =>
      this.record(user, notice).then(
        () => undefined,
        (error: unknown) => bookkeepingFailed(this.db, 'device seen', error),
      ),
    );
  }

  /** Records the device; true when it was new to an account that had others (and an alert went). */
  async record(user: Pick<User, 'id' | 'email' | 'locale'>, notice: SignInNotice): Promise<boolean> {
    const at = new Date(this.clock());
    const now = at.toISOString();
    const known = this.db.kysely.selectFrom('known_devices').where('user_id', '=', user.id);
    const seen = await known.select('id').where('fingerprint', '=', notice.fingerprint).executeTakeFirst();
    if (seen !== undefined) {
      await this.db.kysely.updateTable('known_devices').set({ last_seen_at: now }).where('id', '=', seen.id).execute();
      return false;
    }
    const first = (await known.select('id').limit(1).executeTakeFirst()) === undefined;
    // Two sign-ins from the same new device at once: the unique (user, fingerprint) lets one
    // insert through, and only that one mails.
    const inserted = await this.db.kysely
      .insertInto('known_devices')
      .values({ user_id: user.id, fingerprint: notice.fingerprint, created_at: now, last_seen_at: now })
      .onConflict((conflict) => conflict.columns(['user_id', 'fingerprint']).doNothing())
      .executeTakeFirst();
    if (first || Number(inserted.numInsertedOrUpdatedRows ?? 0n) === 0 || !this.config.newDeviceAlerts) return false;
    this.alert(user, notice, at);
    return true;
  }

  private alert(user: Pick<User, 'email' | 'locale'>, notice: SignInNotice, at: Date): void {
    const lang = user.locale ?? notice.locale;
    // The time as the reader writes it, in UTC (the service knows no reader's time zone) and saying so.
    const time = formatDate(lang, { dateStyle: 'full', timeStyle: 'long' }, at);
    this.mail.notify(user.email, lang, {
      subject: t(lang, 'account_mail.new_device.subject'),
      intro: [
        t(lang, `account_mail.new_device.intro.${notice.channel}`),
        t(lang, 'account_mail.new_device.time', { time }),
        t(lang, 'account_mail.new_device.ip', { ip: mailSafeText(notice.ip) }),
        t(lang, 'account_mail.new_device.device', { device: deviceInMail(notice) ?? t(lang, 'account_mail.new_device.unknown') }),
      ],
      action: { text: t(lang, 'account_mail.new_device.action'), url: `${this.config.appUrl}/security` },
      outro: [t(lang, 'account_mail.new_device.was_you'), t(lang, 'account_mail.new_device.not_you')],
    });
  }
}
