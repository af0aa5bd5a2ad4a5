// The JSON API under /api. Every route answers JSON; every failure is the error envelope.
import etag from '@fastify/etag';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { etagHash } from './etag.js';
import { postRoutes } from './posts.js';
import { ErrorEnvelope } from '../shared/schemas.js';
import { UserSchema } from './schemas.js';
import { settingsRoutes } from './settings.js';
import { tokenRoutes } from './tokens.js';
import { userRoutes } from './user.js';

export const apiRoutes: FastifyPluginAsyncTypebox = async (app) => {
  app.addSchema(ErrorEnvelope);
  app.addSchema(UserSchema);
  // The API reads JSON (and HTML-form bodies, as Laravel does); Fastify's built-in text/plain
  // parser would hand a string to the validator, so such a body is a 415 here, not a 422.
  app.removeContentTypeParser('text/plain');

  await app.register(tokenRoutes);
  await app.register(userRoutes);
  // Public reads carry an ETag and answer If-None-Match with 304.
  await app.register(async (publicReads) => {
    await publicReads.register(etag, { weak: true, replyWith304: false, hashFn: etagHash });
    // A 304 stands in for a 200 only (RFC 9110 §13.1.2): an error carrying a matching ETag is
    // sent as it is. If-None-Match may list several tags, compared weakly.
    publicReads.addHook('onSend', (request, reply, payload, done) => {
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
    await publicReads.register(postRoutes);
    await publicReads.register(settingsRoutes);
  });
};
