// GET /metrics, for Prometheus: the metrics of plugins/metrics.ts in the Prometheus text format
// (docs/metrics.md). Only with METRICS_TOKEN set; without it there is no route, so the answer is
// the 404 of any unknown address and nothing says metrics exist. The token is the scraper's own
// secret, not an API token: the route is outside /api (no API guard, no API rate limit) and out
// of the public OpenAPI document, which describes the API for its clients, not for operators.
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { AppError } from '../modules/shared/errors.js';
import { sameDigest, secretDigest } from '../modules/tokens/token-string.js';

/** The token of `Authorization: Bearer <token>`, or null. */
function bearer(request: FastifyRequest): string | null {
  const match = /^Bearer +(\S+) *$/i.exec(request.headers.authorization ?? '');
  return match?.[1] ?? null;
}

export async function metricsRoutes(app: FastifyInstance): Promise<void> {
  const { metrics } = app;
  const token = app.config.metricsToken;
  if (metrics === null || token === null) return;
  // Compared as SHA-256 digests in constant time: neither the token's length nor how much of it
  // a guess got right shows in the time of the 401.
  const expected = secretDigest(token);
  app.get(
    '/metrics',
    { config: { auth: 'public' }, schema: { hide: true } },
    async (request, reply) => {
      const sent = bearer(request);
      if (sent === null || !sameDigest(secretDigest(sent), expected)) throw new AppError(401, 'Unauthenticated.', {}, { 'www-authenticate': 'Bearer' });
      const text = await metrics.scrape();
      return reply.header('content-type', metrics.contentType).header('cache-control', 'no-store').send(text);
    },
  );
}
