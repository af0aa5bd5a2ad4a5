// GET /up, for load balancers and monitoring: 503 when the database does not answer, else 200;
// the body also says whether the rate-limit store (RATE_LIMIT_STORE) answers.
import { Type } from '@sinclair/typebox';
import type { FastifyInstance } from 'fastify';
import { ping } from '../db/connect.js';
import { limitStoreState } from '../modules/rate-limit/store-state.js';

const Health = Type.Object(
  {
    status: Type.Union([Type.Literal('ok'), Type.Literal('degraded'), Type.Literal('unavailable')], {
      description: '`unavailable` when the database does not answer (503); `degraded` when only the rate-limit store does not (200).',
    }),
    database: Type.Boolean({ description: 'Whether the database answers.' }),
    rate_limit_store: Type.Object(
      { kind: Type.Union([Type.Literal('memory'), Type.Literal('redis'), Type.Literal('database')]), ok: Type.Boolean() },
      { description: 'The store RATE_LIMIT_STORE names, and whether it answers.' },
    ),
  },
  { additionalProperties: false },
);

export async function healthRoutes(app: FastifyInstance): Promise<void> {
  const { rateLimitStore } = app.config;
  const schema = {
    summary: 'Health check, for load balancers and monitoring',
    tags: ['meta'],
    response: { 200: { ...Health, description: 'The database answers.' }, 503: { ...Health, description: 'The database does not answer.' } },
  };
  app.get('/up', { config: { auth: 'public' }, schema }, async (_request, reply) => {
    const [database, store] = await Promise.all([ping(app.db), limitStoreState(rateLimitStore, { redis: app.services.redis, db: app.db })]);
    // A store that fails is 200 "degraded", not 503. Every instance shares that store, so a 503
    // would take them all out of the load balancer at once, turning a Redis outage into a full
    // one, while each still answers safely: the API request limit lets requests through, and the
    // password and token-issue limits count in the process's own memory until the store is back.
    // Monitoring alerts on "degraded"; only the database, without which nothing works, is a 503.
    const status = !database ? 'unavailable' : store.ok ? 'ok' : 'degraded';
    return reply.code(database ? 200 : 503).send({ status, database, rate_limit_store: store });
  });
}
