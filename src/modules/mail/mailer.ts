// The mail transports, chosen by MAIL_MAILER: `smtp` (nodemailer) or `log` (development: the
// whole message is written to <data>/mail/*.eml, and the log line names only its recipient and
// subject, since the body carries reset and verification links).
import { randomBytes } from 'node:crypto';
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import nodemailer from 'nodemailer';
import type { MailConfig } from '../../config.js';

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

export class LogMailer implements Mailer {
  private readonly transport: Transport;

  constructor(
    private readonly config: MailConfig,
    private readonly directory: string,
    private readonly logger: MailLogger,
  ) {
    this.transport = nodemailer.createTransport({ streamTransport: true, buffer: true, newline: 'unix' });
  }

  async send(mail: OutgoingMail): Promise<void> {
    const info = await this.transport.sendMail({ from: from(this.config), ...mail });
    const message = (info as { message: Buffer | string }).message;
    await mkdir(this.directory, { recursive: true });
    const stamp = new Date().toISOString().replace(/[:.]/g, '-');
    const file = join(this.directory, `${stamp}-${randomBytes(3).toString('hex')}.eml`);
    await writeFile(file, message, { mode: 0o600 });
    // Never the body: it holds the link, and a link is as good as the password it resets.
    this.logger.info({ to: mail.to, subject: mail.subject }, 'mail written to the mail directory');
  }

  close(): void {
    this.transport.close();
  }
}

/** The mailer MAIL_MAILER names. */
export function createMailer(config: MailConfig, dataDir: string, logger: MailLogger): Mailer {
  return config.mailer === 'smtp' ? new SmtpMailer(config) : new LogMailer(config, join(dataDir, 'mail'), logger);
}
