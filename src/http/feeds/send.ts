// How the feeds, the sitemap and robots.txt are sent, and who may keep them.
import type { FastifyReply } from 'fastify';
import type { RouteCache } from '../../plugins/types.js';

/**
 * The documents' config.cache: kept by anyone for five minutes. Feed readers and crawlers poll
 * these, and a shared cache in front of the service may answer them meanwhile instead of
 * rendering twenty posts again; a new or withdrawn post reaches them within five minutes, well
 * inside any reader's polling interval. After that a cache revalidates with the ETag and gets a
 * 304 while nothing changed. (The pages are kept a minute, the API's public reads are
 * revalidated on each use; these documents are the same for every reader, in every language.)
 */
export const FEED_CACHE: RouteCache = { public: 300 };

/** Sends a document with its type. */
export function sendDocument(reply: FastifyReply, type: string, body: string | Buffer): FastifyReply {
  return reply.type(type).send(body);
}
