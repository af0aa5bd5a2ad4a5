// GET /favicon.ico: browsers and feed readers ask for it whatever the page links. The icon is an
// SVG (public/favicon.svg, linked from both layouts); a permanent redirect points the old path at
// it, so the request is answered once and cached instead of logging a 404 on every first visit.
import type { FastifyInstance } from 'fastify';

export const FAVICON_PATH = '/assets/favicon.svg';

export async function faviconRoutes(app: FastifyInstance): Promise<void> {
  app.get('/favicon.ico', { config: { auth: 'public' } }, async (_request, reply) => reply.redirect(FAVICON_PATH, 301));
}
