// Guards for pages and form actions (see WebAuth in types.ts). Registered inside the browser
// scope, so every route there must declare `config.auth`; one without it stops the app at start.
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { User } from '../db/types.js';
import { AppError, forbidden } from '../modules/shared/errors.js';
import { twoFactorEnabled } from '../modules/two-factor/two-factor.service.js';
import { canAccessPanel } from '../modules/users/users.service.js';
import { csrfTokens, guestCsrfSecret, sessionStarted } from './session.js';
import type { RouteAuth, SiteUserResolver } from './types.js';

const UNSAFE = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);

/** How the site's user is found for a request; the remember-me login may extend this. */

/** A browser-route request that asks for JSON (an SPA, fetch): it gets the envelope, not a page. */
export function wantsJson(request: FastifyRequest): boolean {
  const accept = request.headers.accept ?? '';
  return accept.includes('application/json') || request.headers['x-requested-with'] === 'XMLHttpRequest';
}


function tokenOf(request: FastifyRequest): string | undefined {
  const body = request.body as Record<string, unknown> | undefined;
  const fromBody = body?._token ?? body?._csrf;
  if (typeof fromBody === 'string') return fromBody;
  const header = request.headers['x-csrf-token'] ?? request.headers['x-xsrf-token'];
  return typeof header === 'string' ? header : undefined;
}

/** Throws 419 unless the request carries a CSRF token of one of `secrets`. */
function assertTokenOf(request: FastifyRequest, secrets: readonly unknown[]): void {
  const token = tokenOf(request);
  if (token === undefined || !secrets.some((secret) => typeof secret === 'string' && csrfTokens.verify(secret, token))) {
    throw new AppError(419, 'CSRF token mismatch.');
  }
}

/** Throws 419 unless the request carries the CSRF token of its session (or of `secret`). */
export function assertCsrf(request: FastifyRequest, secret: unknown = request.session?._csrf): void {
  assertTokenOf(request, [secret]);
}

/**
 * A form action's check: a token of the session's secret or of the guest secret the browser
 * holds (session.ts formToken), so a form shown before the visitor had a session stays valid
 * once they have one.
 */
function assertFormCsrf(request: FastifyRequest): void {
  // Only while nobody is signed in on this session. The guest cookie is a double-submit secret:
  // where it cannot be __Host- (SESSION_DOMAIN, plain http), a sibling subdomain could plant one
  // it holds, with a valid signature taken from its own visit, and forge tokens for it. A guest's
  // action (sign-in, registration, a reset) gains nothing from that; a signed-in one must take
  // its session's secret, which no other site can learn.
  const session = request.session;
  const signedIn = session?.userId !== undefined || session?.adminUserId !== undefined;
  assertTokenOf(request, signedIn ? [session._csrf] : [session?._csrf, guestCsrfSecret(request)]);
}

/**
 * Notes where the site session is used from (address, browser), for the security page's list of
 * sessions. Changed only when they change: the session is saved on every request anyway (rolling).
 */
function noteClient(request: FastifyRequest): void {
  const userAgent = (request.headers['user-agent'] ?? '').slice(0, 512);
  if (request.session.ip !== request.ip) request.session.ip = request.ip;
  if (request.session.userAgent !== userAgent) request.session.userAgent = userAgent;
}

// The site user's row, read once a request: the guard, the page hooks and the handlers all ask
// for it (three reads of the same row on /profile).
const usersRead = new WeakMap<FastifyRequest, { id: number; user: Promise<User | undefined> }>();

/**
 * The user `id` as this request read it first (the web guard reads the session's user before
 * the handler runs). For the row as it stood when the request began, not after a change the
 * request itself made.
 */
export function userOfRequest(app: FastifyInstance, request: FastifyRequest, id: number): Promise<User | undefined> {
  const known = usersRead.get(request);
  if (known?.id === id) return known.user;
  const user = app.services.users.findById(id);
  usersRead.set(request, { id, user });
  return user;
}

export async function webGuards(app: FastifyInstance): Promise<void> {
  if (!app.hasDecorator('siteUserFallbacks')) app.decorate<SiteUserResolver[]>('siteUserFallbacks', []);
  if (!app.hasRequestDecorator('adminUser')) app.decorateRequest('adminUser', null);
  if (!app.hasDecorator('loginSite')) {
    app.decorate('loginSite', async (request: FastifyRequest, user: Pick<User, 'id'>) => {
      // A new session id at login: a session id planted before login is worth nothing after it.
      await request.session.regenerate(['adminUserId', 'intended', 'flash']);
      request.session.userId = user.id;
      request.logUser = user.id;
      noteClient(request);
    });
  }

  const siteUser = async (request: FastifyRequest, reply: FastifyReply): Promise<User | null> => {
    // A request without a session cookie has nobody signed in: reading would start a session.
    const id = sessionStarted(request) ? request.session.userId : undefined;
    if (typeof id === 'number') {
      const user = await userOfRequest(app, request, id);
      if (user !== undefined) {
        noteClient(request);
        return user;
      }
      delete request.session.userId;
    }
    for (const fallback of app.siteUserFallbacks) {
      const user = await fallback(request, reply);
      if (user !== null) {
        usersRead.set(request, { id: user.id, user: Promise.resolve(user) });
        return user;
      }
    }
    return null;
  };

  app.addHook('onRoute', (route) => {
    const auth = route.config?.auth as RouteAuth | undefined;
    if (auth === undefined) throw new Error(`Route ${String(route.method)} ${route.url} declares no config.auth guard.`);
    const methods = Array.isArray(route.method) ? route.method : [route.method];
    const unsafe = methods.some((method) => UNSAFE.has(method));
    const existing = route.preHandler === undefined ? [] : Array.isArray(route.preHandler) ? route.preHandler : [route.preHandler];
    route.preHandler = [
      async (request: FastifyRequest, reply: FastifyReply) => {
        // CSRF first: a forged form post changes nothing, whoever is logged in.
        if (unsafe) assertFormCsrf(request);
        if (auth === 'admin' || auth === 'admin-guest') {
          const id = request.session.adminUserId;
          const user = typeof id === 'number' ? ((await app.services.users.findById(id)) ?? null) : null;
          request.adminUser = user;
          if (auth === 'admin-guest') {
            if (user !== null && canAccessPanel(user)) return reply.redirect('/admin', 302);
            return;
          }
          if (user === null) {
            if (request.method === 'GET') request.session.intended = request.url;
            return reply.redirect('/admin/login', 302);
          }
          // Checked on every request: a demoted admin loses the panel at once.
          if (!canAccessPanel(user)) throw forbidden();
          // ADMIN_REQUIRE_2FA: an administrator without two-factor sign-in sets it up before any
          // other panel page; the set-up page and its actions stay open (/admin/logout is 'public').
          if (app.config.adminRequireTwoFactor && !twoFactorEnabled(user) && !/^\/admin\/two-factor(\/|\?|$)/.test(request.url)) {
            return reply.redirect('/admin/two-factor', request.method === 'GET' ? 302 : 303);
          }
          return;
        }
        const user = await siteUser(request, reply);
        request.siteUser = user;
        if (user !== null) request.siteUserLocale = user.locale ?? undefined;
        if (auth === 'guest' && user !== null) {
          // A script is told, in the envelope it reads, rather than sent to the dashboard's page.
          if (wantsJson(request)) throw new AppError(409, 'Already authenticated.');
          return reply.redirect('/dashboard', 302);
        }
        if (auth === 'user' || auth === 'verified') {
          if (user === null) {
            if (wantsJson(request)) throw new AppError(401, 'Unauthenticated.');
            if (request.method === 'GET') request.session.intended = request.url;
            return reply.redirect('/login', 302);
          }
          if (auth === 'verified' && app.config.mustVerifyEmail && user.email_verified_at === null) {
            if (wantsJson(request)) throw new AppError(409, 'Your email address is not verified.');
            return reply.redirect('/email/verify', 302);
          }
        }
      },
      ...existing,
    ];
  });
}
