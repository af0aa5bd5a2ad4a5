// The ETag of public reads: weak, the SHA-1 of the body in base64. @fastify/etag computes it for
// every answer of the public routes; a route that already knows the tag of a body it has sent
// before (the post list, see posts.ts) sets it itself, and the plugin then leaves it as it is.
import { createHash } from 'node:crypto';

/** The hash part of a tag, as @fastify/etag's `hashFn`. */
export function etagHash(payload: string | Buffer): string {
  return createHash('sha1').update(payload).digest('base64');
}

/** The full header value for a body. */
export function weakEtag(payload: string | Buffer): string {
  return `W/"${etagHash(payload)}"`;
}
