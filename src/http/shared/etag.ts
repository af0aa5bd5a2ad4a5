// The ETag of public reads (the API's, the feeds'): weak, the SHA-1 of the body in base64.
// @fastify/etag computes it for every answer of the public routes; a route that already knows the
// tag of a body it has sent before (the post list, see http/api/posts.ts) sets it itself, and the
// plugin then leaves it as it is.
import { createHash } from 'node:crypto';
import etag from '@fastify/etag';
import type { FastifyInstance } from 'fastify';

/** The hash part of a tag, as @fastify/etag's `hashFn`. */
export function etagHash(payload: string | Buffer): string {
  return createHash('sha1').update(payload).digest('base64');
}

/** The full header value for a body. */
export function weakEtag(payload: string | Buffer): string {
  return `W/"${etagHash(payload)}"`;
}

/**
 * Gives a scope the public reads' conditional answers: a weak ETag on every answer, and a 304
 * with no body for an If-None-Match that matches a 200 (the API's public reads, /feed.xml,
 * /sitemap.xml and /robots.txt share it).
 */
export async function publicReadEtags(scope: FastifyInstance): Promise<void> {
  await scope.register(etag, { weak: true, replyWith304: false, hashFn: etagHash });
  // A 304 stands in for a 200 only (RFC 9110 §13.1.2): an error carrying a matching ETag is
  // sent as it is. If-None-Match may list several tags, compared weakly.
  scope.addHook('onSend', (request, reply, payload, done) => {
    const condition = request.headers['if-none-match'];
    if (condition === undefined || reply.statusCode !== 200) return done(null, payload);
    const tag = reply.getHeader('etag');
    if (typeof tag !== 'string') return done(null, payload);
    const opaque = (value: string) => value.trim().replace(/^W\//, '');
    const matches = condition.trim() === '*' || condition.split(',').some((candidate) => opaque(candidate) === opaque(tag));
    if (!matches) return done(null, payload);
    void reply.code(304);
    done(null, '');
  });
}
