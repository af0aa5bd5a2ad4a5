// Cross-origin access, in three classes of origin:
// - the first-party SPAs (SANCTUM_STATEFUL_DOMAINS): CORS with credentials, on the API, the
//   CSRF-cookie endpoint and the session actions they call (login, logout, …);
// - CORS_ALLOWED_ORIGINS: token-only third parties, CORS on the API without credentials, so a
//   browser never sends them the session cookie's answers;
// - everyone else: no CORS headers at all (the browser keeps the answer from the page).
import cors, { type FastifyCorsOptions } from '@fastify/cors';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import fp from 'fastify-plugin';
import { CSRF_COOKIE_PATH, isFromStatefulFrontend } from './stateful.js';

/** The session actions that answer JSON to an SPA (the browser-accounts routes). */
export const SPA_SESSION_PATHS: readonly string[] = ['/login', '/logout', '/register', '/forgot-password', '/reset-password'];

const METHODS = ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE'];
const TOKEN_HEADERS = ['Accept', 'Authorization', 'Content-Type', 'X-Requested-With', 'If-None-Match'];
const EXPOSED = ['ETag', 'Retry-After', 'X-RateLimit-Limit', 'X-RateLimit-Remaining', 'X-RateLimit-Reset'];

function pathOf(request: FastifyRequest): string {
  return request.url.split('?')[0] ?? request.url;
}

function isApiPath(path: string): boolean {
  return path === '/api' || path.startsWith('/api/');
}

/** Paths a first-party SPA calls across origins. */
export function isStatefulCorsPath(path: string): boolean {
  return isApiPath(path) || path === CSRF_COOKIE_PATH || SPA_SESSION_PATHS.includes(path);
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

export const corsPlugin = fp(
  async (app: FastifyInstance) => {
    const stateful = app.config.statefulDomains;
    const anyThirdParty = app.config.corsAllowedOrigins.includes('*');
    const thirdParty = new Set(app.config.corsAllowedOrigins.map(canonicalOrigin).filter((o): o is string => o !== null));

    const noCors: FastifyCorsOptions = { origin: false };
    const common = { methods: METHODS, exposedHeaders: EXPOSED, maxAge: 600 };

    await app.register(cors, {
      delegator: (request, callback) => {
        const origin = request.headers.origin;
        const path = pathOf(request);
        if (origin === undefined || origin === 'null') return callback(null, noCors);
        // With an Origin header present, the stateful check reads it (never the Referer).
        if (isStatefulCorsPath(path) && isFromStatefulFrontend(request, stateful)) {
          return callback(null, { ...common, origin, credentials: true, allowedHeaders: [...TOKEN_HEADERS, 'X-XSRF-TOKEN', 'X-CSRF-TOKEN'] });
        }
        const canonical = canonicalOrigin(origin);
        if (isApiPath(path) && (anyThirdParty || (canonical !== null && thirdParty.has(canonical)))) {
          return callback(null, { ...common, origin: anyThirdParty ? '*' : origin, credentials: false, allowedHeaders: TOKEN_HEADERS });
        }
        return callback(null, noCors);
      },
    });
  },
  { name: 'cors' },
);
