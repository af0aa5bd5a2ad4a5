// GET /media/<sha256>.<ext>: the images of the media library (modules/media), for posts and the
// panel. Registered outside the browser scope (app.ts), like the feed: no session is read or
// started, so no answer sets a cookie. The name is the hash of the bytes, so what a URL shows
// never changes: browsers and any cache in between keep it for a year without asking again
// (immutable), and a revalidation, should one come, is a 304 on the same hash.
import type { FastifyInstance } from 'fastify';
import { noneMatchHits } from './shared/etag.js';

const FILE = /^([0-9a-f]{64})\.([a-z]{3,4})$/;
const FOREVER = 'public, max-age=31536000, immutable';

export async function mediaFileRoutes(app: FastifyInstance): Promise<void> {
  app.get('/media/:file', async (request, reply) => {
    const match = FILE.exec((request.params as { file: string }).file);
    const file = match === null ? undefined : await app.services.media.file(match[1]!, match[2]!);
    if (match === null || file === undefined) return reply.callNotFound();
    const tag = `"${match[1]!}"`;
    void reply.header('cache-control', FOREVER).header('etag', tag);
    if (noneMatchHits(request.headers['if-none-match'], tag)) return reply.code(304).send();
    return reply.type(file.mime).send(file.bytes);
  });
}
