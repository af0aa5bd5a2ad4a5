// A real SMTP server (smtp-server) on 127.0.0.1 and a free port, in the test process. It keeps
// every delivered message, decoded into its text and HTML parts, so tests read the links out of
// the mail as a user would.
import type { AddressInfo } from 'node:net';
import { SMTPServer, type SMTPServerOptions } from 'smtp-server';

export type ReceivedMail = { from: string; to: string[]; subject: string; text: string; html: string; raw: string };

export type MailServer = {
  port: number;
  messages: ReceivedMail[];
  /** The environment that points the app's smtp mailer at this server. */
  env: Record<string, string>;
  /** The first message (already received or still to come) to `address`, else a timeout error. */
  waitFor(address: string, timeoutMs?: number): Promise<ReceivedMail>;
  /** Messages to `address` received so far. */
  to(address: string): ReceivedMail[];
  close(): Promise<void>;
};

function decodeQuotedPrintable(text: string): Buffer {
  const bytes: number[] = [];
  const soft = text.replace(/=\r?\n/g, '');
  for (let i = 0; i < soft.length; i += 1) {
    const char = soft[i]!;
    const hex = soft.slice(i + 1, i + 3);
    if (char === '=' && /^[0-9A-Fa-f]{2}$/.test(hex)) {
      bytes.push(parseInt(hex, 16));
      i += 2;
    } else {
      bytes.push(...Buffer.from(char, 'utf8'));
    }
  }
  return Buffer.from(bytes);
}

/** Decodes RFC 2047 encoded words (=?UTF-8?Q?…?= and =?UTF-8?B?…?=) in a header. */
export function decodeHeader(value: string): string {
  return value
    .replace(/\?=\s+=\?/g, '?==?')
    .replace(/=\?([^?]+)\?([QqBb])\?([^?]*)\?=/g, (_m, _charset: string, encoding: string, text: string) =>
      encoding.toUpperCase() === 'B' ? Buffer.from(text, 'base64').toString('utf8') : decodeQuotedPrintable(text.replace(/_/g, ' ')).toString('utf8'),
    );
}

type Part = { headers: Map<string, string>; body: string };

function splitPart(raw: string): Part {
  const index = raw.search(/\r?\n\r?\n/);
  const head = index === -1 ? raw : raw.slice(0, index);
  const body = index === -1 ? '' : raw.slice(index).replace(/^\r?\n\r?\n/, '');
  const headers = new Map<string, string>();
  for (const line of head.replace(/\r?\n[ \t]+/g, ' ').split(/\r?\n/)) {
    const colon = line.indexOf(':');
    if (colon > 0) headers.set(line.slice(0, colon).trim().toLowerCase(), line.slice(colon + 1).trim());
  }
  return { headers, body };
}

function decodeBody(part: Part): string {
  const encoding = (part.headers.get('content-transfer-encoding') ?? '7bit').toLowerCase();
  if (encoding === 'quoted-printable') return decodeQuotedPrintable(part.body).toString('utf8');
  if (encoding === 'base64') return Buffer.from(part.body.replace(/\s+/g, ''), 'base64').toString('utf8');
  return part.body;
}

function leaves(part: Part): Part[] {
  const type = part.headers.get('content-type') ?? 'text/plain';
  const boundary = /boundary="?([^";]+)"?/i.exec(type)?.[1];
  if (!type.toLowerCase().startsWith('multipart/') || boundary === undefined) return [part];
  return part.body
    .split(`--${boundary}`)
    .slice(1)
    .filter((chunk) => !chunk.startsWith('--'))
    .flatMap((chunk) => leaves(splitPart(chunk.replace(/^\r?\n/, ''))));
}

export function parseMail(raw: string, envelopeTo: string[], envelopeFrom: string): ReceivedMail {
  const message = splitPart(raw);
  const parts = leaves(message);
  const body = (type: string) => {
    const part = parts.find((p) => (p.headers.get('content-type') ?? 'text/plain').toLowerCase().startsWith(type));
    return part === undefined ? '' : decodeBody(part);
  };
  return { from: envelopeFrom, to: envelopeTo, subject: decodeHeader(message.headers.get('subject') ?? ''), text: body('text/plain'), html: body('text/html'), raw };
}

export async function startMailServer(options: Partial<SMTPServerOptions> = {}): Promise<MailServer> {
  const messages: ReceivedMail[] = [];
  const waiters: { address: string; resolve(mail: ReceivedMail): void }[] = [];
  const server = new SMTPServer({
    authOptional: true,
    disabledCommands: ['STARTTLS'],
    logger: false,
    ...options,
    onData(stream, session, callback) {
      const chunks: Buffer[] = [];
      stream.on('data', (chunk: Buffer) => chunks.push(chunk));
      stream.on('end', () => {
        const to = session.envelope.rcptTo.map((rcpt) => rcpt.address.toLowerCase());
        const from = session.envelope.mailFrom === false ? '' : session.envelope.mailFrom.address;
        const mail = parseMail(Buffer.concat(chunks).toString('utf8'), to, from);
        messages.push(mail);
        for (const waiter of [...waiters]) {
          if (to.includes(waiter.address)) {
            waiters.splice(waiters.indexOf(waiter), 1);
            waiter.resolve(mail);
          }
        }
        callback();
      });
    },
  });
  await new Promise<void>((resolve, reject) => {
    server.server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve());
  });
  const port = (server.server.address() as AddressInfo).port;
  const to = (address: string) => messages.filter((mail) => mail.to.includes(address.toLowerCase()));
  return {
    port,
    messages,
    env: { MAIL_MAILER: 'smtp', MAIL_HOST: '127.0.0.1', MAIL_PORT: String(port), MAIL_ENCRYPTION: 'none' },
    to,
    waitFor(address, timeoutMs = 10_000) {
      const existing = to(address)[0];
      if (existing !== undefined) return Promise.resolve(existing);
      return new Promise((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error(`no mail to ${address} within ${timeoutMs} ms`)), timeoutMs);
        waiters.push({ address: address.toLowerCase(), resolve: (mail) => (clearTimeout(timer), resolve(mail)) });
      });
    },
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

/** The first URL in a mail's text part that starts with `prefix`. */
export function linkIn(mail: ReceivedMail, prefix: string): string {
  const escaped = prefix.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
  const match = new RegExp(`${escaped}[^\\s<>"]*`).exec(mail.text);
  if (match === null) throw new Error(`no link starting with ${prefix} in: ${mail.text}`);
  return match[0];
}
