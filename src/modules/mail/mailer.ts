// The mail transports, chosen by MAIL_MAILER: `smtp` (nodemailer) or `log` (development: the
// whole message is written to <data>/mail/*.eml with a decoded copy beside it for /_dev/mail,
// and the log line names its recipient and subject; outside production also its first link; only
// the newest MAIL_LOG_KEEP mails are kept).
import { randomBytes } from 'node:crypto';
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import nodemailer from 'nodemailer';
import type { MailConfig } from '../../config.js';
import { linksIn } from './links.js';
import { mailId, pruneMails, type StoredMail } from './mailbox.js';

export type OutgoingMail = { to: string; subject: string; text: string; html: string };

export interface Mailer {
  /** Delivers one message; rejects when it could not be handed over. */
  send(mail: OutgoingMail): Promise<void>;
  close(): void;
}

/** The slice of a pino-style logger the mail code writes to. */
export type MailLogger = {
  info(details: object, message: string): void;
  error(details: object, message: string): void;
};

type Transport = ReturnType<typeof nodemailer.createTransport>;

function from(config: MailConfig): { name: string; address: string } {
  return { name: config.fromName, address: config.fromAddress };
}

export class SmtpMailer implements Mailer {
  private readonly transport: Transport;

  constructor(private readonly config: MailConfig) {
    this.transport = nodemailer.createTransport({
      host: config.host,
      port: config.port,
      // tls: TLS from the first byte (port 465); starttls: refuse to go on in clear text;
      // none: plain SMTP, no upgrade attempted (local relays, test servers).
      secure: config.encryption === 'tls',
      requireTLS: config.encryption === 'starttls',
      ignoreTLS: config.encryption === 'none',
      auth: config.username === null ? undefined : { user: config.username, pass: config.password ?? '' },
      // A mail server that hangs must not keep deliveries piling up for minutes (nodemailer's defaults).
      connectionTimeout: 10_000,
      greetingTimeout: 10_000,
      socketTimeout: 30_000,
    });
  }

  async send(mail: OutgoingMail): Promise<void> {
    await this.transport.sendMail({ from: from(this.config), ...mail });
  }

  close(): void {
    this.transport.close();
  }
}

export type LogMailerOptions = {
  /** Not production (NODE_ENV): the log line also carries the mail's first link. */
  development: boolean;
};

export class LogMailer implements Mailer {
  private readonly transport: Transport;
  /** Mails this process wrote; the directory is pruned at the first and then every pruneEvery. */
  private written = 0;
  private readonly pruneEvery: number;
  /** The time of this process's last mail, in ms: each new mail's is later. */
  private lastTime = 0;

  constructor(
    private readonly config: MailConfig,
    /** Where the mails are written (<data>/mail); /_dev/mail reads them there. */
    readonly directory: string,
    private readonly logger: MailLogger,
    private readonly options: LogMailerOptions = { development: false },
  ) {
    this.transport = nodemailer.createTransport({ streamTransport: true, buffer: true, newline: 'unix' });
    // Listing the directory at every mail would cost more than writing the mail: once per tenth
    // of MAIL_LOG_KEEP, so the directory holds at most that many mails over the limit.
    this.pruneEvery = Math.max(1, Math.ceil(config.logKeep / 10));
  }

  async send(mail: OutgoingMail): Promise<void> {
    const info = await this.transport.sendMail({ from: from(this.config), ...mail });
    const message = (info as { message: Buffer | string }).message;
    await mkdir(this.directory, { recursive: true });
    // Ids sort by time: two mails of one millisecond would keep (and list) in a random order.
    const now = new Date((this.lastTime = Math.max(Date.now(), this.lastTime + 1)));
    const id = mailId(now, randomBytes(3).toString('hex'));
    const links = linksIn(mail.text);
    // The .eml first: a mail is listed (from its .json) only once its whole message is there.
    // The decoded copy holds what the .eml holds, on the same disk, with the same mode.
    await writeFile(join(this.directory, `${id}.eml`), message, { mode: 0o600 });
    const decoded: Omit<StoredMail, 'id'> = { to: mail.to, subject: mail.subject, date: now.toISOString(), text: mail.text, html: mail.html, links };
    await writeFile(join(this.directory, `${id}.json`), `${JSON.stringify(decoded, null, 2)}\n`, { mode: 0o600 });
    // In production never the body nor a link: a link is as good as the password it resets.
    // Outside production (the issue asks for it) the first link goes in the line, so that a
    // developer can follow a reset or verification mail from the terminal. This is the one
    // exception to "no token in logs", and a narrow one: only with this file mailer, whose
    // files already hold the same link in clear, on the same disk, for whoever reads the log.
    const link = this.options.development ? links[0] : undefined;
    this.logger.info({ to: mail.to, subject: mail.subject, ...(link === undefined ? {} : { link }) }, 'mail written to the mail directory');
    await this.pruneNowAndThen();
  }

  /**
   * Keeps the newest MAIL_LOG_KEEP mails: without it the directory grew with every mail, for
   * ever (15 MB in one test, one alert per new device). The first mail of a process prunes, so a
   * directory left large by an earlier run shrinks at once. A failure is logged, never the mail's.
   */
  private async pruneNowAndThen(): Promise<void> {
    if (this.written++ % this.pruneEvery !== 0) return;
    try {
      await pruneMails(this.directory, this.config.logKeep);
    } catch (error) {
      this.logger.error({ code: (error as { code?: unknown }).code }, 'the mail directory could not be pruned');
    }
  }

  close(): void {
    this.transport.close();
  }
}

/** The mailer MAIL_MAILER names. */
export function createMailer(config: MailConfig, dataDir: string, logger: MailLogger, options?: LogMailerOptions): Mailer {
  return config.mailer === 'smtp' ? new SmtpMailer(config) : new LogMailer(config, join(dataDir, 'mail'), logger, options);
}
