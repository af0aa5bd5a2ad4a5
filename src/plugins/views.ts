// Server-rendered pages: Eta templates (output escaped unless written <%~ %>), the assets in
// public/ served by the service itself, the visitor's locale and flash messages.
import { randomBytes } from 'node:crypto';
import { fileURLToPath } from 'node:url';
import fastifyStatic from '@fastify/static';
import view from '@fastify/view';
import { Eta } from 'eta';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import fp from 'fastify-plugin';
import { failureKind, outageLogOf } from '../db/outage-log.js';
import { weakEtag } from '../http/shared/etag.js';
import { escapeHtml } from '../http/shared/latin1.js';
import { REMEMBER_COOKIE } from '../http/shared/remember-cookie.js';
import { LOCALES, isLocale, t, type Locale } from '../modules/i18n/translator.js';
import { passkeysUnavailable } from '../modules/passkeys/relying-party.js';
import { canAccessPanel } from '../modules/users/users.service.js';
import type { SiteSettings } from '../modules/settings/site.js';
import type { FieldErrors } from '../modules/shared/errors.js';
import type { ErrorBody } from '../http/shared/schemas.js';
import { keptWhileUnchanged } from '../perf/read-cache.js';
import { SESSION_COOKIE, cookieName, formToken, sessionStarted } from './session.js';
import type { PublicPageBuild } from './types.js';
import { wantsJson } from './web-guard.js';

export const LOCALE_COOKIE = 'locale';

/**
 * Eta, with the file of each template found once per name and including file. Eta resolves the
 * path at every render and every include (a JSON key, path joins, a check that the file stays
 * under the views directory): 3 % of a CPU profile of /security, a page of many partials. The
 * views do not move while the process runs, so outside development the answer is kept; in
 * development (templates reread at each render) it is found each time, as before. A name that
 * resolves outside the views directory still throws, and is not kept.
 */
class FoundOnceEta extends Eta {
  constructor(keep: boolean) {
    // Every value escaped, and written in Latin-1 (http/shared/latin1.ts: a page of one-byte
    // characters is written to the socket several times faster).
    super({ escapeFunction: escapeHtml });
    const resolve = this.resolvePath;
    if (!keep || resolve === null) return;
    const found = new Map<string, string>();
    const kept: NonNullable<Eta['resolvePath']> = function (template, options) {
      const key = `${options?.filepath ?? ''}\n${template}`;
      let path = found.get(key);
      if (path === undefined) found.set(key, (path = resolve.call(this, template, options)));
      return path;
    };
    this.resolvePath = kept;
  }
}

/** What a page template receives besides its own data (as `it.*`). */
export type PageContext = {
  appName: string;
  locale: Locale;
  locales: readonly string[];
  t: (key: string, replace?: Record<string, string | number>) => string;
  /** The CSRF token for a form; called only by templates that have one, so pages without forms create no session. */
  csrf: () => string;
  path: string;
  /** `admin`: the header links to the panel for those who may open it. */
  user: { id: number; name: string; email: string; verified: boolean; admin: boolean } | null;
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
  // A request without a session has no messages: reading them would start one.
  if (!sessionStarted(request)) return {};
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
    engine: { eta: new FoundOnceEta(production) },
    root: fileURLToPath(new URL('../views', import.meta.url)),
    production,
  });

  app.decorateRequest('siteUser', null);
  app.decorateRequest('site', null);

  // The site settings for this request, read once (a kept read: no query while unchanged). A
  // failed read shows the defaults: an error page must still render.
  // Logged with the database's other failures: once per kind and interval, not once a page.
  const unreadable = (error: unknown) => outageLogOf(app.db).failed(`site settings|${failureKind(error)}`, 'site settings unreadable', {}, error);
  const reading = new WeakMap<FastifyRequest, Promise<SiteSettings>>();
  const siteFor = (request: FastifyRequest): SiteSettings | Promise<SiteSettings> => {
    if (request.site !== null) return request.site;
    const pending = reading.get(request);
    if (pending !== undefined) return pending;
    const keep = (site: SiteSettings) => (request.site = site);
    try {
      const site = app.services.settings.site();
      if (!(site instanceof Promise)) return keep(site);
      const read = site.then(keep, (error: unknown) => {
        unreadable(error);
        return keep(app.services.settings.siteDefaults());
      });
      reading.set(request, read);
      return read;
    } catch (error) {
      unreadable(error);
      return keep(app.services.settings.siteDefaults());
    }
  };
  // Every route that may render a page reads them before its handler, which may already pick a
  // language (localeOf) for a title or a message; the API, its documentation, /up and the static
  // files (/assets, /vendor, /media: a query each on PostgreSQL, for a file that never shows them) pay
  // nothing. A 404 under them still gets its page: renderErrorPage reads them when missing.
  const pages = new WeakSet<object>();
  app.addHook('onRoute', (route) => {
    if (/^\/(api|docs|up|assets|vendor|media|favicon\.ico)(\/|$)/.test(route.url)) return;
    pages.add(route.handler);
    const existing = route.preHandler === undefined ? [] : Array.isArray(route.preHandler) ? route.preHandler : [route.preHandler];
    route.preHandler = [async (request: FastifyRequest) => void (await siteFor(request)), ...existing];
  });
  // Where the settings wait for a look at the change counter (PostgreSQL: a round trip), the read
  // starts as a page's request arrives, beside the session's read, not after it and the guard's.
  app.addHook('onRequest', (request, _reply, done) => {
    if (request.site === null && pages.has(request.routeOptions.handler)) void siteFor(request);
    done();
  });

  // APP_URL is fixed for the life of the process: an IP address or a plain-http host other than
  // localhost makes browsers refuse every passkey, so the sign-in pages do not offer one there
  // (the security page says why and what to set).
  const passkeys = passkeysUnavailable(app.config.appUrl) === null;
  // `reply` null: a page rendered once for every anonymous visitor (no flash): a public page's
  // (no form), or a guest form's, whose token is then `tokenMark`, replaced at each request.
  const context = (request: FastifyRequest, reply: FastifyReply | null, tokenMark?: string): PageContext => {
    const locale = localeOf(request, request.siteUserLocale ?? app.config.locale);
    const flashed = takeFlash(request);
    const user = request.siteUser;
    let token: string | undefined;
    return {
      appName: request.site?.name ?? app.config.appName,
      locale,
      locales: request.site?.interfaceLocales ?? LOCALES,
      t: (key, replace) => t(locale, key, replace),
      // Outside the browser scope (a 404 page) there is no session, hence no CSRF token. One
      // token for every form of the page: each costs a hash, and any is valid for its secret.
      csrf: () => {
        if (tokenMark !== undefined) return tokenMark;
        if (reply === null) throw new Error('A public page has no form: its CSRF token would be one visitor’s, kept for all.');
        token ??= typeof reply.generateCsrf === 'function' ? formToken(request, reply) : '';
        return token;
      },
      path: request.url.split('?')[0] ?? '/',
      user: user === null ? null : { id: user.id, name: user.name, email: user.email, verified: user.email_verified_at !== null, admin: canAccessPanel(user) },
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

  // A public page is the same for every visitor who carries no session: its body, rendered once,
  // serves them all while the database is unchanged (perf/read-cache.ts: a write through any
  // instance is seen by the next request) and until the page's `until` (a scheduled post).
  // Kept per address, language and site settings (a settings change also moves the counter;
  // the key holds however they were read). Not in development, where templates are reread.
  const carriesSession = [cookieName(app.config, SESSION_COOKIE), cookieName(app.config, REMEMBER_COOKIE)];
  const anonymous = (request: FastifyRequest) =>
    request.siteUser === null && request.headers.authorization === undefined && carriesSession.every((name) => request.cookies?.[name] === undefined);
  // The body is kept as the bytes sent: encoding a page of text again at every request cost an
  // eighth of a kept page's time.
  type Kept = { body: Buffer; etag: string; until: number | null };
  type Ask = { key: string; request: FastifyRequest; build: () => Promise<PublicPageBuild> };
  const siteKeys = new WeakMap<SiteSettings, string>();
  const siteKey = (site: SiteSettings | null): string => {
    if (site === null) return '';
    let key = siteKeys.get(site);
    if (key === undefined) siteKeys.set(site, (key = JSON.stringify(site)));
    return key;
  };
  const keptPages = keptWhileUnchanged<Ask, string, Kept>(app.db.changes, { maxEntries: 256, key: (ask: Ask) => ask.key, until: (kept) => kept.until }, async (ask): Promise<Kept> => {
    const built = await ask.build();
    // No form on a public page: a CSRF token in a kept body would be one visitor's, shown to all.
    const it = { ...context(ask.request, null), ...built.data };
    const body = Buffer.from(await app.view(built.template, it));
    return { body, etag: weakEtag(body), until: built.until };
  });
  // What a page kept for anonymous visitors depends on: its address, their language, the site settings.
  const anonymousKey = async (request: FastifyRequest): Promise<string> =>
    `${request.url}\n${localeOf(request, app.config.locale)}\n${siteKey(await siteFor(request))}`;
  // A kept body, as page() would have sent it.
  const sendKept = (reply: FastifyReply, body: Buffer) => reply.code(200).header('cache-control', 'no-store').header('content-type', 'text/html; charset=utf-8').send(body);

  app.decorateReply('publicPage', async function publicPage(this: FastifyReply, build: () => Promise<PublicPageBuild>) {
    const request = this.request;
    if (!production || !anonymous(request)) {
      const built = await build();
      return this.page(built.template, built.data);
    }
    const kept = await keptPages({ key: await anonymousKey(request), request, build });
    return sendKept(this.header('etag', kept.etag), kept.body);
  });

  // A guest's form (/login, /register, /forgot-password) differs from one visitor without a session
  // to the next only by its CSRF token: it is rendered once, with a mark where the token goes, and
  // kept as the parts around the mark, on the same terms as a public page; each answer puts its
  // visitor's own token (formToken: the guest cookie's secret) between them. Rendering the form
  // was most of the page's time. Anyone with a session, or with a message to show, gets page().
  const TOKEN_MARK = `csrf-mark-${randomBytes(16).toString('hex')}`;
  type Form = { key: string; request: FastifyRequest; template: string; locals: Record<string, unknown> | null };
  const keptForms = keptWhileUnchanged<Form, string, Buffer[]>(app.db.changes, { maxEntries: 64, key: (form: Form) => form.key }, async (form) => {
    // As reply.view() does: the route's locals, then the page's context over them.
    const html = await app.view(form.template, { ...form.locals, ...context(form.request, null, TOKEN_MARK) });
    return html.split(TOKEN_MARK).map((part) => Buffer.from(part));
  });
  app.decorateReply('guestForm', async function guestForm(this: FastifyReply, template: string) {
    const request = this.request;
    if (!production || !anonymous(request)) return this.page(template);
    const locals = (this as FastifyReply & { locals: Record<string, unknown> | null }).locals;
    const key = `${template}\n${await anonymousKey(request)}\n${locals === null ? '' : JSON.stringify(locals)}`;
    let parts: Buffer[];
    try {
      parts = await keptForms({ key, request, template, locals });
    } catch {
      // The look at the change counters failed (PostgreSQL unreachable): the form needs no query,
      // so it is rendered for this visitor alone, as before it was kept, with the settings' defaults.
      return this.page(template);
    }
    let body = parts[0] ?? Buffer.alloc(0);
    if (parts.length > 1) {
      const token = Buffer.from(formToken(request, this));
      body = Buffer.concat(parts.flatMap((part, index) => (index === 0 ? [part] : [token, part])));
    }
    return sendKept(this, body);
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
    // Else the answer's own message, in the visitor's language where the locale files have it (as the API's are).
    const message = t(locale, helpKey) === helpKey ? t(locale, body.message) : t(locale, helpKey);
    const hint = csrfFailureHint(request, status);
    return reply.page('errors/error', { statusCode: status, title, message, hint: hint === null ? null : t(locale, hint) }, status);
  };
}, { name: 'views', dependencies: ['errors', 'cookie'] });

