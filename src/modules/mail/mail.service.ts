// Composing and sending notification mails: one text part and one HTML part, rendered from
// src/views/mail in the recipient's locale, delivered in the background so that what a visitor
// sees never depends on the mail server (no 500, no timing or error that tells an account exists).
import { fileURLToPath } from 'node:url';
import { Eta } from 'eta';
import { t } from '../i18n/translator.js';
import type { MaybePromise } from '../../lib/maybe-promise.js';
import { LogMailer, type MailLogger, type Mailer, type OutgoingMail } from './mailer.js';

/** A notification in Laravel's shape: lines, one action button, more lines. */
export type Notification = {
  subject: string;
  intro: string[];
  action: { text: string; url: string };
  outro: string[];
};

const views = fileURLToPath(new URL('../../views/mail', import.meta.url));
// The text part must not be HTML-escaped (a link's `&` stays `&`); the HTML part must be.
const html = new Eta({ views, autoEscape: true, cache: true });
const text = new Eta({ views, autoEscape: false, cache: true, autoTrim: false });

/** Renders a notification for one recipient in `locale`. */
export function composeMail(to: string, locale: string, appName: string, notification: Notification): OutgoingMail {
  const data = {
    ...notification,
    appName,
    locale,
    greeting: t(locale, 'mail.greeting'),
    salutation: t(locale, 'mail.salutation', { app: appName }),
    subcopy: t(locale, 'mail.subcopy', { action: notification.action.text }),
  };
  return {
    to,
    subject: notification.subject,
    text: text.render('./message-text', data),
    html: html.render('./message-html', data),
  };
}

/**
 * Where mails find the site's name (SettingsService): the `site_name` setting, APP_NAME before
 * one exists, and the defaults when the settings cannot be read.
 */
export type SiteSource = { site(): MaybePromise<{ name: string }>; siteDefaults(): { name: string } };

/** An error's message for a log line. */
function reasonOf(error: unknown): string {
  return typeof error === 'object' && error !== null && 'message' in error ? String(error.message) : String(error);
}

const NO_SETTINGS: SiteSource = { site: () => ({ name: 'Tessera' }), siteDefaults: () => ({ name: 'Tessera' }) };

export class MailService {
  private readonly pending = new Set<Promise<void>>();

  constructor(
    private readonly mailer: Mailer,
    private readonly logger: MailLogger,
    private readonly settings: SiteSource = NO_SETTINGS,
  ) {}

  /** Where the log mailer writes its mails; null with any other transport. */
  get mailDirectory(): string | null {
    return this.mailer instanceof LogMailer ? this.mailer.directory : null;
  }

  /**
   * Hands the mail to the mailer without waiting. A failure is logged with the recipient, the
   * subject and the transport's error code, never the body (it holds the link).
   */
  dispatch(mail: OutgoingMail): void {
    this.track(this.deliver(mail));
  }

  /**
   * Sends a notification to `to` in `locale`, signed with the site's name as it is when the
   * mail is composed (in the background, like the delivery: reading the setting delays no answer).
   */
  notify(to: string, locale: string, notification: Notification): void {
    // Settings that cannot be read still let the mail go, signed with APP_NAME.
    const name = async () => {
      try {
        return (await this.settings.site()).name;
      } catch (error) {
        this.logger.error({ reason: reasonOf(error) }, 'site settings unreadable for a mail');
        return this.settings.siteDefaults().name;
      }
    };
    this.track(
      name()
        .then((site) => this.deliver(composeMail(to, locale, site, notification)))
        .catch((error: unknown) => this.logger.error({ to, subject: notification.subject, reason: reasonOf(error) }, 'mail composition failed')),
    );
  }

  private deliver(mail: OutgoingMail): Promise<void> {
    return this.mailer.send(mail).then(
      () => undefined,
      (error: unknown) => {
        const e = error as { code?: unknown; responseCode?: unknown };
        this.logger.error(
          { to: mail.to, subject: mail.subject, code: e.code, responseCode: e.responseCode, reason: reasonOf(error) },
          'mail delivery failed',
        );
      },
    );
  }

  private track(task: Promise<void>): void {
    this.pending.add(task);
    void task.finally(() => this.pending.delete(task));
  }

  /**
   * Runs work that may dispatch mail after the answer has gone (so its cost or failure shows in
   * no answer); settled() waits for it too. A failure is logged without details of the work.
   */
  defer(label: string, work: () => Promise<void>): void {
    const task: Promise<void> = new Promise<void>((resolve) => setImmediate(resolve))
      .then(work)
      .catch((error: unknown) => this.logger.error({ reason: reasonOf(error) }, `${label} failed`));
    this.track(task);
  }

  /** Resolves once every mail dispatched so far is delivered or has failed (shutdown, tests). */
  async settled(): Promise<void> {
    while (this.pending.size > 0) await Promise.all([...this.pending]);
  }

  close(): void {
    this.mailer.close();
  }
}
