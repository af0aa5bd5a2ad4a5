// Entity tags (RFC 9110 §8.8.3): weak, the SHA-1 of the body in base64. plugins/http-cache.ts
// tags the answers of the routes that declare config.cache; a route that already knows the tag
// of a body it has sent before (the post list, see http/api/posts.ts) sets it itself, and the
// plugin then leaves it as it is.
import { createHash } from 'node:crypto';

/** The ETag header value for a body. */
export function weakEtag(payload: string | Buffer): string {
  return `W/"${createHash('sha1').update(payload).digest('base64')}"`;
}

/**
 * Whether an If-None-Match header matches a tag: `*`, or one of the listed tags compared weakly
 * (RFC 9110 §13.1.2: W/ is ignored on either side).
 */
export function noneMatchHits(condition: string | undefined, tag: string): boolean {
  if (condition === undefined) return false;
  if (condition.trim() === '*') return true;
  const opaque = (value: string) => value.trim().replace(/^W\//, '');
  const wanted = opaque(tag);
  return condition.split(',').some((candidate) => opaque(candidate) === wanted);
}
