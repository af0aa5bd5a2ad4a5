// Composing and sending notification mails: one text part and one HTML part, rendered from
// src/views/mail in the recipient's locale, delivered in the background so that what a visitor
// sees never depends on the mail server (no 500, no timing or error that tells an account exists).
import { fileURLToPath } from 'node:url';
import { Eta } from 'eta';
import { t } from '../i18n/translator.js';
import type { MailLogger, Mailer, OutgoingMail } from './mailer.js';

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

export class MailService {
  private readonly pending = new Set<Promise<void>>();

  constructor(
    private readonly mailer: Mailer,
    private readonly logger: MailLogger,
  ) {}

  /**
   * Hands the mail to the mailer without waiting. A failure is logged with the recipient, the
   * subject and the transport's error code, never the body (it holds the link).
   */
  dispatch(mail: OutgoingMail): void {
    const delivery: Promise<void> = this.mailer.send(mail).then(
      () => undefined,
      (error: unknown) => {
        const e = error as { code?: unknown; responseCode?: unknown; message?: unknown };
        this.logger.error(
          { to: mail.to, subject: mail.subject, code: e.code, responseCode: e.responseCode, reason: String(e.message ?? error) },
          'mail delivery failed',
        );
      },
    );
    this.pending.add(delivery);
    void delivery.finally(() => this.pending.delete(delivery));
  }

  /**
   * Runs work that may dispatch mail after the answer has gone (so its cost or failure shows in
   * no answer); settled() waits for it too. A failure is logged without details of the work.
   */
  defer(label: string, work: () => Promise<void>): void {
    const task: Promise<void> = new Promise<void>((resolve) => setImmediate(resolve))
      .then(work)
      .catch((error: unknown) => this.logger.error({ reason: String((error as { message?: unknown }).message ?? error) }, `${label} failed`));
    this.pending.add(task);
    void task.finally(() => this.pending.delete(task));
  }

  /** Resolves once every mail dispatched so far is delivered or has failed (shutdown, tests). */
  async settled(): Promise<void> {
    while (this.pending.size > 0) await Promise.all([...this.pending]);
  }

  close(): void {
    this.mailer.close();
  }
}
