// Every request on PostgreSQL starts a scope in which its kept reads share one look at the change
// counters (read-cache.ts PostgresChanges): a look sent after the request arrived sees every
// commit acknowledged before it, so the settings, the session, the user and the page a request
// keeps need one round trip between them, not one each in sequence. On SQLite a look is
// synchronous and costs no round trip: nothing to do.
import type { FastifyInstance } from 'fastify';
import fp from 'fastify-plugin';
import { PostgresChanges } from './read-cache.js';

export const requestLooksPlugin = fp(
  async (app: FastifyInstance) => {
    const changes = app.db.changes;
    if (!(changes instanceof PostgresChanges)) return;
    app.addHook('onRequest', (_request, _reply, done) => changes.request(done));
  },
  { name: 'request-looks', decorators: { fastify: ['db'] } },
);
