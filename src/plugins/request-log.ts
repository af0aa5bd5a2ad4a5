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
//
// The line is the one pino writes for `request.log.info({...}, 'request')`, byte for byte (level,
// time, pid, hostname, reqId, the fields, msg; test/api/request-log.test.ts compares the two),
// put together here from pino's own pieces (its bindings, its clock, its stream) rather than
// through its generic serializer and the request's child logger: 4,100 fewer of the 124,400
// instructions of an authenticated API read (bench/instructions.ts). Every other line still goes
// through pino. (Fastify's per-request child logger made lazily saved nothing measurable: 120,350
// against 120,240 instructions; not kept.)
import type { FastifyInstance, FastifyRequest } from 'fastify';
import fp from 'fastify-plugin';
import { symbols } from 'pino';

type PinoInternals = {
  /** The root logger's bindings, serialized: `,"pid":…,"hostname":"…"`. */
  [symbols.chindingsSym]: string;
  /** pino's clock: `,"time":…`. */
  [symbols.timeSym]: () => string;
  [symbols.streamSym]: { write(line: string): unknown };
  isLevelEnabled(level: string): boolean;
};

/** The id of the user a request acted as, or null. */
function userOf(request: FastifyRequest): number | null {
  return request.logUser ?? request.caller?.user.id ?? request.siteUser?.id ?? request.adminUser?.id ?? null;
}

export const requestLogPlugin = fp(async (app: FastifyInstance) => {
  app.decorateRequest('logUser', null);
  const root = app.log as unknown as PinoInternals;
  const bindings = root[symbols.chindingsSym];
  const clock = root[symbols.timeSym];
  const stream = root[symbols.streamSym];
  // pino's level 30 and its line's start; the request id's label is Fastify's default.
  const start = '{"level":30';
  // Callback style: an async hook costs a promise per request.
  app.addHook('onResponse', (request, reply, done) => {
    // The root logger's level (LOG_LEVEL): no route here sets a level of its own above info.
    if (root.isLevelEnabled('info')) {
      const ms = Math.round(reply.elapsedTime * 10) / 10;
      stream.write(
        `${start}${clock()}${bindings},"reqId":${JSON.stringify(request.id)},"method":${JSON.stringify(request.method)},` +
          `"path":${JSON.stringify(request.routeOptions.url ?? '(unmatched)')},"status":${reply.statusCode},` +
          `"ms":${Number.isFinite(ms) ? ms : null},"user":${userOf(request)},"ip":${JSON.stringify(request.ip)},"msg":"request"}\n`,
      );
    }
    done();
  });
}, { name: 'request-log' });

