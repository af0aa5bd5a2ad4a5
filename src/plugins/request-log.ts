// One structured log line per request: method, route, status, duration, the user and the client
// address (ASVS 16.2.1: when, where, who, what). The route pattern is logged rather than the raw
// URL so that secrets in paths (reset tokens, signed links) and query strings never reach the
// log; no header, cookie or body is logged.
//
// `user` is the id of whoever the request acted as: the bearer token's or first-party session's
// user (API), the site or panel session's user (pages), or the user a login, registration or
// token issue has just signed in (`request.logUser`, set there); null for a visitor. So a
// successful sign-in names its user, and a failed one its route, status and address only: the
// address tried is not logged (it is someone's personal data, and now and then a password typed
// into the wrong field). `ip` is `request.ip`: the socket's address, or the client's behind the
// proxies TRUSTED_PROXIES names.
import type { FastifyInstance } from 'fastify';
import fp from 'fastify-plugin';

declare module 'fastify' {
  interface FastifyRequest {
    /** The user a sign-in on this request has just authenticated (for the request's log line). */
    logUser: number | null;
  }
}

export const requestLogPlugin = fp(async (app: FastifyInstance) => {
  app.decorateRequest('logUser', null);
  // Callback style: an async hook costs a promise per request.
  app.addHook('onResponse', (request, reply, done) => {
    const route = request.routeOptions.url;
    request.log.info(
      {
        method: request.method,
        path: route ?? '(unmatched)',
        status: reply.statusCode,
        ms: Math.round(reply.elapsedTime * 10) / 10,
        user: request.logUser ?? request.caller?.user.id ?? request.siteUser?.id ?? request.adminUser?.id ?? null,
        ip: request.ip,
      },
      'request',
    );
    done();
  });
});
