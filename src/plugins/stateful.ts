// First-party single-page apps on the browser session (Sanctum's "stateful" requests). A request
// to /api from a host listed in SANCTUM_STATEFUL_DOMAINS, without a bearer token, is
// authenticated by the session cookie; any other origin never is. Cookie-authenticated writes
// must echo the XSRF-TOKEN cookie as the X-XSRF-TOKEN header. GET /sanctum/csrf-cookie starts it.
//
// statefulPlugin (root) resolves API callers from the session, read on demand (the session
// plugin itself runs on the browser routes only). statefulPageHooks runs in the browser scope,
// registered before the session plugin there: its onSend hook may create the session's CSRF
// secret, and must run before the session's own onSend hook saves the session.
import { Type } from '@sinclair/typebox';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import fp from 'fastify-plugin';
import type { User } from '../db/types.js';
import type { AuthUser } from '../modules/users/auth-user.js';
import { NoContent } from '../http/shared/schemas.js';
import { assertCsrf } from './web-guard.js';
import { SESSION_COOKIE, cookieName, cookieScope, readSession, sessionStarted, type StoredSessionData } from './session.js';

export const XSRF_COOKIE = 'XSRF-TOKEN';
export const CSRF_COOKIE_PATH = '/sanctum/csrf-cookie';

const UNSAFE = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);

/**
 * The `host[:port]` of the page that sent the request: from Origin, or from Referer when the
 * browser sent no Origin. An Origin of "null" (sandboxed or opaque) names no host.
 */
export function frontendHost(request: FastifyRequest): string | null {
  const origin = request.headers.origin;
  const source = origin !== undefined && origin !== '' ? origin : request.headers.referer;
  if (source === undefined || source === '' || source === 'null') return null;
  try {
    const url = new URL(source);
    return url.protocol === 'http:' || url.protocol === 'https:' ? url.host.toLowerCase() : null;
  } catch {
    return null;
  }
}

/** Whether the request comes from a first-party SPA: its host[:port] is listed exactly. */
export function isFromStatefulFrontend(request: FastifyRequest, statefulDomains: readonly string[]): boolean {
  if (statefulDomains.length === 0) return false;
  const host = frontendHost(request);
  return host !== null && statefulDomains.includes(host);
}

function authUser(user: User): AuthUser {
  return {
    id: user.id,
    name: user.name,
    email: user.email,
    email_verified_at: user.email_verified_at,
    is_admin: user.is_admin,
    created_at: user.created_at,
    updated_at: user.updated_at,
  };
}

/** Sets the XSRF-TOKEN cookie: a CSRF token of the request's session. */
function setXsrfCookie(app: FastifyInstance, reply: FastifyReply): void {
  // Readable by the SPA's JavaScript on purpose (not HttpOnly): it proves the page can read
  // this site's cookies, which a cross-site page cannot. Lax keeps it off cross-site requests.
  // Same name always (SPAs read it by name); SESSION_DOMAIN's Domain lets a sibling subdomain's SPA read it.
  void reply.setCookie(XSRF_COOKIE, reply.generateCsrf(), {
    ...cookieScope(app.config),
    httpOnly: false,
    sameSite: 'lax',
    maxAge: app.config.sessionLifetimeMinutes * 60,
  });
}

export const statefulPlugin = fp(
  async (app: FastifyInstance) => {
    const domains = app.config.statefulDomains;
    const lifetimeMs = app.config.sessionLifetimeMinutes * 60_000;

    app.apiCallerResolvers.push(async (request, reply) => {
      // The api guard asks only when no Authorization header came: a bearer token always wins.
      if (request.credentials !== null || !isFromStatefulFrontend(request, domains)) return null;
      const session = await readSession(app, request);
      const id = session?.userId;
      if (session === null || typeof id !== 'number') return null;
      // A cookie rides along on a forged cross-site form post; the XSRF header cannot.
      if (UNSAFE.has(request.method)) assertCsrf(request, session._csrf);
      const user = await app.services.users.findById(id);
      if (user === undefined) return null;
      await keepSessionAlive(app, request, reply, session, lifetimeMs);
      return { user: authUser(user), tokenId: null, abilities: ['*'] };
    });
  },
  { name: 'stateful', dependencies: ['cookie', 'api-guard'] },
);

// The idle lifetime restarts with use, as on the pages: at most once a minute the row's expiry
// moves forward and the cookie is sent again with a fresh Max-Age.
async function keepSessionAlive(
  app: FastifyInstance,
  request: FastifyRequest,
  reply: FastifyReply,
  session: StoredSessionData & { cookie?: { expires?: string | null } },
  lifetimeMs: number,
): Promise<void> {
  const now = Date.now();
  const expires = session.cookie?.expires == null ? 0 : Date.parse(session.cookie.expires);
  if (expires - now > lifetimeMs - 60_000) return;
  const name = cookieName(app.config, SESSION_COOKIE);
  const raw = request.cookies[name];
  const sessionId = raw === undefined ? null : raw.slice(0, raw.lastIndexOf('.'));
  if (raw === undefined || sessionId === null) return;
  const renewed = { ...session, cookie: { ...session.cookie, expires: new Date(now + lifetimeMs).toISOString() } };
  await new Promise<void>((resolve) => app.services.sessions.set(sessionId, renewed, () => resolve()));
  void reply.setCookie(name, raw, {
    ...cookieScope(app.config),
    httpOnly: true,
    sameSite: 'lax',
    maxAge: lifetimeMs / 1000,
  });
}

/** Browser-scope hooks for SPAs: every answer to a logged-in SPA carries a current XSRF token. */
export async function statefulPageHooks(app: FastifyInstance): Promise<void> {
  const domains = app.config.statefulDomains;
  // As Laravel does: a login renews the session (and its CSRF secret), and the SPA's next write
  // must still pass.
  app.addHook('onSend', async (request, reply, payload) => {
    // Nobody is signed in on a session not started (sessionStarted): reading it would start one.
    if (!sessionStarted(request) || request.session?.userId === undefined || !isFromStatefulFrontend(request, domains)) return payload;
    setXsrfCookie(app, reply);
    return payload;
  });
}

/** GET /sanctum/csrf-cookie: how an SPA starts (registered with the routes, so it is documented). */
export async function csrfCookieRoutes(app: FastifyInstance): Promise<void> {
  app.get(
    CSRF_COOKIE_PATH,
    {
      config: { auth: 'public' },
      schema: {
        summary: 'Start a first-party SPA session: sets the XSRF-TOKEN cookie',
        description:
          'Sets the session cookie and an XSRF-TOKEN cookie readable by JavaScript. Send its value back as the ' +
          'X-XSRF-TOKEN header on every POST, PUT, PATCH or DELETE authenticated by the session cookie.',
        tags: ['spa'],
        response: {
          204: {
            ...NoContent,
            description: 'Started: both cookies are set.',
            headers: {
              'Set-Cookie': Type.String({
                description:
                  `Two cookies: \`${XSRF_COOKIE}\` (readable by JavaScript, SameSite=Lax; send its URL-decoded value as X-XSRF-TOKEN) ` +
                  'and the session cookie (HttpOnly, SameSite=Lax; its name is the `session` security scheme\'s).',
              }),
              'Cache-Control': Type.Literal('no-store'),
            },
          },
        },
      },
    },
    async (_request, reply) => {
      setXsrfCookie(app, reply);
      return reply.code(204).header('cache-control', 'no-store').send();
    },
  );
}
