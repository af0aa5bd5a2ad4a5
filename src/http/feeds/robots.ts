// GET /robots.txt: crawlers may read the public site (the home page, the blog, the documents
// here, the API documentation), not the account pages, the panel, the API or the development
// pages, and find the sitemap. robots.txt is advice that well-behaved crawlers follow, not
// access control: every area listed is guarded by the service itself (a session, a token, an
// administrator; /_dev only outside production), and listing it hides nothing from anyone.
import type { FastifyInstance } from 'fastify';
import { FEED_CACHE, sendDocument } from './send.js';

/** The areas a search engine has nothing to index in: sign-in walls, the panel, JSON, development tools. */
export const PRIVATE_AREAS = ['/admin', '/dashboard', '/profile', '/security', '/user/', '/api/', '/_dev/'] as const;

/** The robots.txt document. */
export function robotsTxt(appUrl: string): string {
  return ['User-agent: *', 'Allow: /', ...PRIVATE_AREAS.map((path) => `Disallow: ${path}`), '', `Sitemap: ${appUrl}/sitemap.xml`, ''].join('\n');
}

export async function robotsRoute(app: FastifyInstance): Promise<void> {
  const body = robotsTxt(app.config.appUrl);
  app.get('/robots.txt', { config: { auth: 'public', cache: FEED_CACHE } }, async (_request, reply) => sendDocument(reply, 'text/plain; charset=utf-8', body));
}
