// How the feeds, the sitemap and robots.txt are sent.
import type { FastifyReply } from 'fastify';

/**
 * Sends a document with its type. Cacheable by anyone for five minutes: feed readers and
 * crawlers poll these, and a shared cache in front of the service may answer them meanwhile
 * instead of rendering twenty posts again; a new or withdrawn post reaches them within five
 * minutes, well inside any reader's polling interval. After that a cache revalidates with the
 * ETag and gets a 304 while nothing changed. (The API's public reads send no Cache-Control and
 * are revalidated on each use; these documents are the same for every reader, in every
 * language, so a short freshness is safe.)
 */
export function sendDocument(reply: FastifyReply, type: string, body: string): FastifyReply {
  return reply.type(type).header('cache-control', 'public, max-age=300').send(body);
}
