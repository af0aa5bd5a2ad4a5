// GET /up, for load balancers and monitoring: 503 when the database does not answer, else 200;
// the body also says whether the rate-limit store (RATE_LIMIT_STORE) answers, and, when the
// database answers but cannot store a write (a full disk), says that too.
import { Type } from '@sinclair/typebox';
import type { FastifyInstance } from 'fastify';
import { ping } from '../db/connect.js';
import { writeProbeOf } from '../db/write-probe.js';
import { limitStoreState } from '../modules/rate-limit/store-state.js';

const Health = Type.Object(
  {
    status: Type.Union([Type.Literal('ok'), Type.Literal('degraded'), Type.Literal('unavailable')], {
      description:
        '`unavailable` when the database does not answer (503); `degraded` when it answers but cannot store a write, or the rate-limit store does not answer (200).',
    }),
    database: Type.Boolean({ description: 'Whether the database answers.' }),
    database_writable: Type.Optional(
      Type.Literal(false, {
        description: 'Present, false, when the database answers but a write cannot be stored (a full disk): reads are served, writes answer 503. Absent otherwise.',
      }),
    ),
    rate_limit_store: Type.Object(
      { kind: Type.Union([Type.Literal('memory'), Type.Literal('redis'), Type.Literal('database')]), ok: Type.Boolean() },
      { description: 'The store RATE_LIMIT_STORE names, and whether it answers.' },
    ),
  },
  { additionalProperties: false },
);

export async function healthRoutes(app: FastifyInstance): Promise<void> {
  const { rateLimitStore } = app.config;
  const probe = writeProbeOf(app.db);
  const schema = {
    summary: 'Health check, for load balancers and monitoring',
    tags: ['meta'],
    response: {
      200: {
        ...Health,
        description: 'The database answers (`degraded`: it cannot store writes, or the rate-limit store does not answer).',
        examples: [{ status: 'ok', database: true, rate_limit_store: { kind: 'memory', ok: true } }],
      },
      503: { ...Health, description: 'The database does not answer.', examples: [{ status: 'unavailable', database: false, rate_limit_store: { kind: 'memory', ok: true } }] },
    },
  };
  app.get('/up', { config: { auth: 'public' }, schema }, async (_request, reply) => {
    const [database, store] = await Promise.all([ping(app.db), limitStoreState(rateLimitStore, { redis: app.services.redis, db: app.db })]);
    // The write probe runs at most every few seconds (db/write-probe.ts), not once per ask.
    const writable = !database || (await probe.check());
    // A store that fails is 200 "degraded", not 503. Every instance shares that store, so a 503
    // would take them all out of the load balancer at once, turning a Redis outage into a full
    // one, while each still answers safely: the API request limit lets requests through, and the
    // password and token-issue limits count in the process's own memory until the store is back.
    // A database that answers but cannot write (a full disk) is "degraded" for the same reason:
    // the instances share it, and each still serves every read (the public pages, the API's
    // reads with a token) while writes answer 503 with Retry-After. Monitoring alerts on
    // "degraded"; only the database that does not answer at all, without which nothing works,
    // is a 503.
    const status = !database ? 'unavailable' : store.ok && writable ? 'ok' : 'degraded';
    const body = { status, database, ...(writable ? {} : { database_writable: false as const }), rate_limit_store: store };
    return reply.code(database ? 200 : 503).send(body);
  });
}
