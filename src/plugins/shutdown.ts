// While the app closes (SIGTERM), a request that still arrives on an open connection is answered
// 503 "Service Unavailable." in the usual envelope (or error page) with `Connection: close`, so the
// client can retry elsewhere; requests already running finish normally. Fastify's own
// return503OnClosing would answer a fixed body of its own, outside the API's envelope.
import type { FastifyInstance, onRequestHookHandler } from 'fastify';
import fp from 'fastify-plugin';
import { AppError } from '../modules/shared/errors.js';

export const shutdownPlugin = fp(async (app: FastifyInstance) => {
  let closing = false;
  app.addHook('preClose', (done) => {
    closing = true;
    done();
  });
  const refuseWhileClosing: onRequestHookHandler = (_request, reply, done) => {
    if (!closing) return done();
    void reply.header('connection', 'close');
    done(new AppError(503, 'Service Unavailable.'));
  };
  app.addHook('onRequest', refuseWhileClosing);
}, { name: 'shutdown' });
