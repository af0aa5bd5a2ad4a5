// One structured log line per request: method, route, status, duration. The route pattern is
// logged rather than the raw URL so that secrets in paths (reset tokens, signed links) and query
// strings never reach the log; no header, cookie or body is logged.
import type { FastifyInstance } from 'fastify';
import fp from 'fastify-plugin';

export const requestLogPlugin = fp(async (app: FastifyInstance) => {
  // Callback style: an async hook costs a promise per request.
  app.addHook('onResponse', (request, reply, done) => {
    const route = request.routeOptions.url;
    request.log.info(
      {
        method: request.method,
        path: route ?? '(unmatched)',
        status: reply.statusCode,
        ms: Math.round(reply.elapsedTime * 10) / 10,
      },
      'request',
    );
    done();
  });
});
