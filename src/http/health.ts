// GET /up: 200 when the service and its database answer, 503 otherwise (for load balancers).
import type { FastifyInstance } from 'fastify';
import { ping } from '../db/connect.js';

export async function healthRoutes(app: FastifyInstance): Promise<void> {
  app.get('/up', { config: { auth: 'public' } }, async (_request, reply) => {
    const database = await ping(app.db);
    return reply.code(database ? 200 : 503).send({ status: database ? 'ok' : 'unavailable', database });
  });
}
