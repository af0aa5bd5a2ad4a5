// /_dev/mail: the development mailbox. The mails the log mailer wrote to <data>/mail, listed
// newest first, each shown decoded with its links clickable and its HTML part framed without
// scripts. Its routes exist only outside production with the log mailer (devMailDirectory),
// so a production server has no such route at all (404).
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { Config } from '../../config.js';
import { formatDate } from '../../modules/i18n/formats.js';
import { t, type Locale } from '../../modules/i18n/translator.js';
import { linkify } from '../../modules/mail/links.js';
import { MAILBOX_LIMIT, listMails, readMail } from '../../modules/mail/mailbox.js';
import type { MailService } from '../../modules/mail/mail.service.js';
import { AppError, notFound } from '../../modules/shared/errors.js';
import { localeFor } from '../shared/forms.js';

/** Where the mailbox reads from: the log mailer's directory outside production; null otherwise (no routes). */
export function devMailDirectory(config: Pick<Config, 'env'>, mail: Pick<MailService, 'mailDirectory'>): string | null {
  return config.env === 'production' ? null : mail.mailDirectory;
}

const LOOPBACK = new Set(['127.0.0.1', '::1', '::ffff:127.0.0.1']);
const FORWARDED = ['forwarded', 'x-forwarded-for', 'x-real-ip'];

/**
 * The mailbox shows every reset link the service sent, so it answers only a browser on this
 * machine: a server started without NODE_ENV=production (development is the default) and
 * reachable from elsewhere must not hand anyone the links to take over its accounts. The
 * socket's address, not request.ip, and no forwarding header: a reverse proxy on the same
 * machine connects from loopback too, but says whom it forwards for.
 */
function assertLocal(request: FastifyRequest, locale: Locale, appHost: string): void {
  const local = LOOPBACK.has(request.socket.remoteAddress ?? '') && FORWARDED.every((name) => request.headers[name] === undefined);
  if (!local || !localHost(request.headers.host, appHost)) throw new AppError(403, t(locale, 'dev_mail.local_only'));
}

/**
 * The address the browser asked for names this machine (or APP_URL's host). Without this check
 * a web page the developer opens elsewhere could point its own name at 127.0.0.1 (DNS
 * rebinding) and read the mailbox as a same-origin page: the connection would come from
 * loopback, but with the page's own host name in the Host header.
 */
function localHost(header: string | undefined, appHost: string): boolean {
  if (header === undefined) return false;
  let hostname: string;
  try {
    hostname = new URL(`http://${header}`).hostname;
  } catch {
    return false;
  }
  return hostname === 'localhost' || hostname === '127.0.0.1' || hostname === '[::1]' || hostname === appHost;
}

/** A stored time in the visitor's language, in UTC. */
function formatter(locale: Locale): (iso: string) => string {
  return (iso) => `${formatDate(locale, { dateStyle: 'medium', timeStyle: 'medium' }, iso)} UTC`;
}

// The HTML part is the service's own template, but it is shown as a mail reader shows a mail:
// nothing in it runs (CSP `sandbox` without allow-scripts, as the iframe's sandbox attribute)
// and it loads nothing; its inline styles apply, which the site's own CSP would block.
const HTML_PART_POLICY = "default-src 'none'; style-src 'unsafe-inline'; img-src data:; frame-ancestors 'self'; sandbox";

export async function devMailRoutes(app: FastifyInstance): Promise<void> {
  const directory = devMailDirectory(app.config, app.services.mail);
  if (directory === null) return;
  const appHost = new URL(app.config.appUrl).hostname;
  const found = async (request: FastifyRequest<{ Params: { id: string } }>, locale: Locale) => {
    assertLocal(request, locale, appHost);
    const mail = await readMail(directory, request.params.id);
    if (mail === null) throw notFound();
    return mail;
  };

  app.get('/', { config: { auth: 'public' } }, async (request, reply) => {
    const locale = localeFor(app, request);
    assertLocal(request, locale, appHost);
    return reply.page('dev/mail-list', { mails: await listMails(directory), directory, limit: MAILBOX_LIMIT, when: formatter(locale) });
  });

  app.get<{ Params: { id: string } }>('/:id', { config: { auth: 'public' } }, async (request, reply) => {
    const locale = localeFor(app, request);
    const mail = await found(request, locale);
    return reply.page('dev/mail-show', { mail, pieces: linkify(mail.text), when: formatter(locale) });
  });

  app.get<{ Params: { id: string } }>('/:id/html', { config: { auth: 'public' } }, async (request, reply) => {
    const mail = await found(request, localeFor(app, request));
    return reply
      .header('content-security-policy', HTML_PART_POLICY)
      .header('x-frame-options', 'SAMEORIGIN')
      .header('cache-control', 'no-store')
      .type('text/html; charset=utf-8')
      .send(mail.html);
  });
}
