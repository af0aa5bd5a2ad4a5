// Documents for machines: the Atom feed (/feed.xml), the sitemap (/sitemap.xml) and robots.txt.
// Registered outside the browser scope (app.ts): no session is read or started here, so an
// answer sets no cookie and a crawler's thousand requests write no session row. Each route
// declares FEED_CACHE: a weak ETag, an empty 304 for a matching If-None-Match, and a short
// public freshness (plugins/http-cache.ts).
import type { FastifyInstance } from 'fastify';
import { feedRoute } from './feed.js';
import { robotsRoute } from './robots.js';
import { sitemapRoute } from './sitemap.js';
import { namePlugins } from '../shared/plugin-names.js';

// Display names for Fastify, which otherwise searches require.cache for each (shared/plugin-names.ts).
namePlugins({ feedRoute, sitemapRoute, robotsRoute });

export async function feedRoutes(app: FastifyInstance): Promise<void> {
  await app.register(feedRoute);
  await app.register(sitemapRoute);
  await app.register(robotsRoute);
}
