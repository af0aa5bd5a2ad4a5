// Documents for machines: the Atom feed (/feed.xml), the sitemap (/sitemap.xml) and robots.txt.
// Registered outside the browser scope (app.ts): no session is read or started here, so an
// answer sets no cookie and a crawler's thousand requests write no session row. Like the API's
// public reads they carry a weak ETag and answer a matching If-None-Match with an empty 304.
import type { FastifyInstance } from 'fastify';
import { publicReadEtags } from '../shared/etag.js';
import { feedRoute } from './feed.js';
import { robotsRoute } from './robots.js';
import { sitemapRoute } from './sitemap.js';

export async function feedRoutes(app: FastifyInstance): Promise<void> {
  await publicReadEtags(app);
  await app.register(feedRoute);
  await app.register(sitemapRoute);
  await app.register(robotsRoute);
}
