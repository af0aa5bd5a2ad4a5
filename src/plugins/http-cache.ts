// HTTP caching, as each route declares it in config.cache (RouteCache in types.ts): the ETag,
// the 304 and the Cache-Control of those routes are decided here, once, after everything else
// has had its say on the answer (the session's cookie included).
//
// The tag is the hash of the body this request rendered, never a kept one: a post published,
// edited or withdrawn through any instance changes the next answer, and so its tag. Keeping an
// answer is for anonymous requests only: whatever may differ for a signed-in visitor (the
// header's name, a flash message) never reaches a shared cache, and an answer that sets a cookie
// (a session started, a remember-me login) is one visitor's.
import type { FastifyInstance, FastifyRequest, onSendHookHandler } from 'fastify';
import fp from 'fastify-plugin';
import { noneMatchHits, weakEtag } from '../http/shared/etag.js';
import { REMEMBER_COOKIE } from '../http/shared/remember-cookie.js';
import { SESSION_COOKIE, cookieName } from './session.js';
import type { RouteCache } from './types.js';

const PRIVATE = 'no-store';

/** The onSend hook of a route declaring `cache`: tag, 304, and who may keep the answer. */
function cacheHook(cache: RouteCache, carriesSession: (request: FastifyRequest) => boolean): onSendHookHandler {
  const publicly = `public, max-age=${cache.public}`;
  return (request, reply, payload, done) => {
    // Only a 200 stands for the resource (a 304 replaces nothing else, RFC 9110 §13.1.2); an
    // answer setting a cookie belongs to one visitor.
    if (reply.statusCode !== 200 || reply.hasHeader('set-cookie')) {
      void reply.removeHeader('etag').header('cache-control', PRIVATE);
      return done(null, payload);
    }
    void reply.header('cache-control', carriesSession(request) ? PRIVATE : publicly);
    if (typeof payload !== 'string' && !Buffer.isBuffer(payload)) return done(null, payload);
    const known = reply.getHeader('etag');
    const tag = typeof known === 'string' ? known : weakEtag(payload);
    void reply.header('etag', tag);
    if (!noneMatchHits(request.headers['if-none-match'], tag)) return done(null, payload);
    // A 304 has no body and describes none (no Content-Type). HEAD's own hook, after this one,
    // empties the body and sends the length a 200 would have had, which a 304 may carry.
    void reply.code(304).removeHeader('content-type');
    done(null, request.method === 'HEAD' ? payload : null);
  };
}

export const httpCachePlugin = fp(
  async (app: FastifyInstance) => {
    const sessionCookies = [cookieName(app.config, SESSION_COOKIE), cookieName(app.config, REMEMBER_COOKIE)];
    // A session's presence, not its validity: an ended session's cookie still makes the answer
    // private, which costs nothing but a copy in a cache, and reading the store would cost a query.
    const carriesSession = (request: FastifyRequest) =>
      request.headers.authorization !== undefined || sessionCookies.some((name) => request.cookies?.[name] !== undefined);

    app.addHook('onRoute', (route) => {
      const cache = route.config?.cache;
      if (cache === undefined) return;
      const methods = Array.isArray(route.method) ? route.method : [route.method];
      if (methods.some((method) => method !== 'GET' && method !== 'HEAD')) throw new Error(`Route ${String(route.method)} ${route.url}: config.cache is for GET routes.`);
      if (!Number.isInteger(cache.public) || cache.public < 0) throw new Error(`Route ${route.url}: config.cache.public is a whole number of seconds.`);
      // First of the route's own onSend hooks: the HEAD route's (which empties the body) comes after.
      const existing = route.onSend === undefined ? [] : Array.isArray(route.onSend) ? route.onSend : [route.onSend];
      route.onSend = [cacheHook(cache, carriesSession), ...existing];
    });
  },
  { name: 'http-cache', dependencies: ['cookie'] },
);
