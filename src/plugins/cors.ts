// Cross-origin access, in three classes of origin:
// - the first-party SPAs (SANCTUM_STATEFUL_DOMAINS): CORS with credentials, on the API, the
//   CSRF-cookie endpoint and the session steps they call (login, the two-factor code, the
//   password confirmation, logout, …): each such route says `config: { spa: true }`, read here as
//   the route is added, so a new step cannot be left out of a list kept elsewhere;
// - CORS_ALLOWED_ORIGINS: token-only third parties, CORS on the API without credentials, so a
//   browser never sends them the session cookie's answers;
// - everyone else: no CORS headers at all (the browser keeps the answer from the page).
import type { FastifyInstance, FastifyRequest } from 'fastify';
import fp from 'fastify-plugin';
import { CSRF_COOKIE_PATH, isFromStatefulFrontend } from './stateful.js';

const METHODS = ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE'];
const TOKEN_HEADERS = ['Accept', 'Authorization', 'Content-Type', 'X-Requested-With', 'If-None-Match'];
const EXPOSED = ['ETag', 'Retry-After', 'X-RateLimit-Limit', 'X-RateLimit-Remaining', 'X-RateLimit-Reset'];

function pathOf(request: FastifyRequest): string {
  return request.url.split('?')[0] ?? request.url;
}

function isApiPath(path: string): boolean {
  return path === '/api' || path.startsWith('/api/');
}

/** Whether a first-party SPA calls this path across origins: the API, the CSRF cookie, a session step. */
function isStatefulCorsPath(path: string, spaPaths: ReadonlySet<string>): boolean {
  return isApiPath(path) || path === CSRF_COOKIE_PATH || spaPaths.has(path);
}

/** An origin in its canonical form (scheme://host[:port], lowercase), or null. */
function canonicalOrigin(value: string): string | null {
  try {
    const url = new URL(value);
    return url.origin === 'null' ? null : url.origin.toLowerCase();
  } catch {
    return null;
  }
}

type CorsConfig = { stateful: readonly string[]; anyThirdParty: boolean; thirdParty: Set<string>; spaPaths: Set<string> };

function allowed(request: FastifyRequest, config: CorsConfig, origin: string) {
  const path = pathOf(request);
  // With an Origin header present, the stateful check reads it (never the Referer).
  if (isStatefulCorsPath(path, config.spaPaths) && isFromStatefulFrontend(request, config.stateful)) {
    return { allowOrigin: origin, credentials: true, headers: STATEFUL_HEADERS };
  }
  const canonical = canonicalOrigin(origin);
  if (isApiPath(path) && (config.anyThirdParty || (canonical !== null && config.thirdParty.has(canonical)))) {
    return { allowOrigin: config.anyThirdParty ? '*' : origin, credentials: false, headers: TOKEN_HEADERS.join(', ') };
  }
  return null;
}

const STATEFUL_HEADERS = [...TOKEN_HEADERS, 'X-XSRF-TOKEN', 'X-CSRF-TOKEN'].join(', ');

// Hand-written rather than @fastify/cors: that plugin resolves and normalises its options on
// every request, Origin or not (measured at 4 % of an authenticated API read); here a request
// without an Origin header — every server-to-server and same-origin call — costs one lookup.
export const corsPlugin = fp(
  async (app: FastifyInstance) => {
    const config: CorsConfig = {
      stateful: app.config.statefulDomains,
      anyThirdParty: app.config.corsAllowedOrigins.includes('*'),
      thirdParty: new Set(app.config.corsAllowedOrigins.map(canonicalOrigin).filter((o): o is string => o !== null)),
      spaPaths: new Set(),
    };
    // The SPA's session steps, from the routes themselves. By path: a preflight (OPTIONS) matches
    // no route, so the path is what it can be judged by; hence static paths only.
    app.addHook('onRoute', (route) => {
      if (route.config?.spa !== true) return;
      if (/[:*]/.test(route.url)) throw new Error(`Route ${route.url}: config.spa needs a static path (the CORS preflight is matched by path).`);
      config.spaPaths.add(route.url);
    });
    const methods = METHODS.join(', ');
    const exposed = EXPOSED.join(', ');

    app.addHook('onRequest', (request, reply, done) => {
      const origin = request.headers.origin;
      if (origin === undefined || origin === 'null') return done();
      // The answer depends on the Origin: caches must keep one copy per origin.
      void reply.header('vary', 'Origin');
      const allow = allowed(request, config, origin);
      if (allow === null) return done();
      void reply.header('access-control-allow-origin', allow.allowOrigin);
      if (allow.credentials) void reply.header('access-control-allow-credentials', 'true');
      const preflight = request.method === 'OPTIONS' && request.headers['access-control-request-method'] !== undefined;
      if (!preflight) {
        void reply.header('access-control-expose-headers', exposed);
        return done();
      }
      // A preflight is answered here, before any guard: the browser sends it without credentials.
      void reply
        .header('access-control-allow-methods', methods)
        .header('access-control-allow-headers', allow.headers)
        .header('access-control-max-age', '600')
        .code(204)
        .send();
    });
  },
  { name: 'cors' },
);
