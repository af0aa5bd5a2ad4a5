// Server-rendered pages: Eta templates (output escaped unless written <%~ %>), the assets in
// public/ served by the service itself, the visitor's locale and flash messages.
import { fileURLToPath } from 'node:url';
import fastifyStatic from '@fastify/static';
import view from '@fastify/view';
import { Eta } from 'eta';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import fp from 'fastify-plugin';
import { failureKind, outageLogOf } from '../db/outage-log.js';
import { LOCALES, isLocale, t, type Locale } from '../modules/i18n/translator.js';
import { passkeysUnavailable } from '../modules/passkeys/relying-party.js';
import type { SiteSettings } from '../modules/settings/site.js';
import type { FieldErrors } from '../modules/shared/errors.js';
import type { ErrorBody } from '../http/shared/schemas.js';
import { wantsJson } from './web-guard.js';

export const LOCALE_COOKIE = 'locale';

/** What a page template receives besides its own data (as `it.*`). */
export type PageContext = {
  appName: string;
  locale: Locale;
  locales: readonly string[];
  t: (key: string, replace?: Record<string, string | number>) => string;
  /** The CSRF token for a form; called only by templates that have one, so pages without forms create no session. */
  csrf: () => string;
  path: string;
  user: { id: number; name: string; email: string; verified: boolean } | null;
  status: string | null;
  errors: FieldErrors;
  old: Record<string, string>;
  /** Whether browsers accept passkeys at APP_URL: the sign-in pages offer them only then. */
  passkeys: boolean;
};

/**
 * The visitor's locale among those the site offers (the `locales` setting, where translated):
 * the `locale` cookie (set by the switcher), else Accept-Language, else `fallback` when it is
 * the logged-in user's saved locale, else the `default_locale` setting, else APP_LOCALE.
 */
export function localeOf(request: FastifyRequest, fallback: string): Locale {
  const offered: readonly string[] = request.site?.interfaceLocales ?? LOCALES;
  const isOffered = (code: string): code is Locale => isLocale(code) && offered.includes(code);
  const fromCookie = request.cookies?.[LOCALE_COOKIE];
  if (fromCookie !== undefined && isOffered(fromCookie)) return fromCookie;
  const header = request.headers['accept-language'];
  if (typeof header === 'string') {
    const ranked = header
      .split(',')
      .map((part) => {
        const [tag = '', q] = part.trim().split(';q=');
        return { tag: tag.toLowerCase().split('-')[0] ?? '', q: q === undefined ? 1 : Number(q) };
      })
      .sort((a, b) => b.q - a.q);
    const match = ranked.find((entry) => isOffered(entry.tag));
    if (match !== undefined) return match.tag as Locale;
  }
  if (fallback === request.siteUserLocale && isOffered(fallback)) return fallback;
  if (request.site !== null && request.site !== undefined) return request.site.defaultLocale;
  return isLocale(fallback) ? fallback : 'en';
}

/** Takes the one-request messages out of the session. */
function takeFlash(request: FastifyRequest): Record<string, unknown> {
  const flash = request.session?.flash;
  if (flash === undefined) return {};
  delete request.session.flash;
  return flash;
}

/** Stores messages for the next page (after a redirect). */
export function flash(request: FastifyRequest, values: Record<string, unknown>): void {
  request.session.flash = { ...(request.session.flash ?? {}), ...values };
}

/**
 * In development, the other reason for a 419 than an old page: APP_URL is https, so the session
 * cookie is Secure, and this request came over http (no trusted proxy said otherwise), where
 * @fastify/session sets no Secure cookie, so the form never had a session. The hint's locale key,
 * or null. Production pages never explain the deployment (the start logs that warning instead).
 */
export function csrfFailureHint(request: FastifyRequest, status: number): string | null {
  const config = request.server.config;
  if (status !== 419 || config.env !== 'development') return null;
  return config.appUrl.startsWith('https:') && request.protocol !== 'https' ? 'errors.hint.419_insecure' : null;
}

export const viewsPlugin = fp(async (app: FastifyInstance) => {
  const production = app.config.env !== 'development';
  await app.register(fastifyStatic, {
    root: fileURLToPath(new URL('../../public', import.meta.url)),
    prefix: '/assets/',
    maxAge: production ? '1h' : 0,
  });
  // @fastify/view gives every reply an empty `locals` object in an onRequest hook of its own,
  // unless the decorator exists: pages get their data through reply.page(), so no request (an
  // API read least of all) pays for that hook.
  app.decorateReply('locals', null);
  await app.register(view, {
    engine: { eta: new Eta() },
    root: fileURLToPath(new URL('../views', import.meta.url)),
    production,
  });

  app.decorateRequest('siteUser', null);
  app.decorateRequest('site', null);

  // The site settings for this request, read once (a kept read: no query while unchanged). A
  // failed read shows the defaults: an error page must still render.
  // Logged with the database's other failures: once per kind and interval, not once a page.
  const unreadable = (error: unknown) => outageLogOf(app.db).failed(`site settings|${failureKind(error)}`, 'site settings unreadable', {}, error);
  const siteFor = (request: FastifyRequest): SiteSettings | Promise<SiteSettings> => {
    if (request.site !== null) return request.site;
    const keep = (site: SiteSettings) => (request.site = site);
    try {
      const site = app.services.settings.site();
      return site instanceof Promise
        ? site.then(keep, (error: unknown) => {
            unreadable(error);
            return keep(app.services.settings.siteDefaults());
          })
        : keep(site);
    } catch (error) {
      unreadable(error);
      return keep(app.services.settings.siteDefaults());
    }
  };
  // Every route that may render a page reads them before its handler, which may already pick a
  // language (localeOf) for a title or a message; the API, its documentation, /up and the static
  // files (/assets, /vendor: a query each on PostgreSQL, for a file that never shows them) pay
  // nothing. A 404 under them still gets its page: renderErrorPage reads them when missing.
  app.addHook('onRoute', (route) => {
    if (/^\/(api|docs|up|assets|vendor|favicon\.ico)(\/|$)/.test(route.url)) return;
    const existing = route.preHandler === undefined ? [] : Array.isArray(route.preHandler) ? route.preHandler : [route.preHandler];
    route.preHandler = [async (request: FastifyRequest) => void (await siteFor(request)), ...existing];
  });

  // APP_URL is fixed for the life of the process: an IP address or a plain-http host other than
  // localhost makes browsers refuse every passkey, so the sign-in pages do not offer one there
  // (the security page says why and what to set).
  const passkeys = passkeysUnavailable(app.config.appUrl) === null;
  const context = (request: FastifyRequest, reply: FastifyReply): PageContext => {
    const locale = localeOf(request, request.siteUserLocale ?? app.config.locale);
    const flashed = takeFlash(request);
    const user = request.siteUser;
    return {
      appName: request.site?.name ?? app.config.appName,
      locale,
      locales: request.site?.interfaceLocales ?? LOCALES,
      t: (key, replace) => t(locale, key, replace),
      // Outside the browser scope (a 404 page) there is no session, hence no CSRF token.
      csrf: () => (typeof reply.generateCsrf === 'function' ? reply.generateCsrf() : ''),
      path: request.url.split('?')[0] ?? '/',
      user: user === null ? null : { id: user.id, name: user.name, email: user.email, verified: user.email_verified_at !== null },
      status: typeof flashed.status === 'string' ? flashed.status : null,
      errors: (flashed.errors as FieldErrors | undefined) ?? {},
      old: (flashed.old as Record<string, string> | undefined) ?? {},
      passkeys,
    };
  };

  app.decorateReply('page', function page(this: FastifyReply, template: string, data: Record<string, unknown> = {}, status = 200) {
    const render = () => {
      const it = { ...context(this.request, this), ...data };
      void this.code(status).header('cache-control', 'no-store').view(template, it);
    };
    const site = siteFor(this.request);
    if (site instanceof Promise) void site.then(render);
    else render();
    return this;
  });

  app.renderErrorPage = (request: FastifyRequest, reply: FastifyReply, status: number, body: ErrorBody) => {
    // A script on a page (fetch, an SPA) gets the API's envelope: a 419 or 422 it can read.
    if (wantsJson(request)) return reply.code(status).header('cache-control', 'no-store').send(body);
    // Outside a route (a 404) the site settings are not read yet: the page's language needs them.
    if (request.site === null) return Promise.resolve(siteFor(request)).then(() => app.renderErrorPage(request, reply, status, body));
    const locale = localeOf(request, app.config.locale);
    const key = `errors.${status}`;
    const title = t(locale, key) === key ? body.message : t(locale, key);
    // Some statuses have a plain-language explanation (a 419 says what to do, not "CSRF token mismatch").
    const helpKey = `errors.help.${status}`;
    const message = t(locale, helpKey) === helpKey ? body.message : t(locale, helpKey);
    const hint = csrfFailureHint(request, status);
    return reply.page('errors/error', { statusCode: status, title, message, hint: hint === null ? null : t(locale, hint) }, status);
  };
}, { name: 'views', dependencies: ['errors', 'cookie'] });

