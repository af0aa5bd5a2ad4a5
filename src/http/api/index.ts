// The JSON API under /api. Every route answers JSON; every failure is the error envelope.
import etag from '@fastify/etag';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { postRoutes } from './posts.js';
import { ErrorEnvelope, UserSchema } from './schemas.js';
import { settingsRoutes } from './settings.js';
import { tokenRoutes } from './tokens.js';
import { userRoutes } from './user.js';

export const apiRoutes: FastifyPluginAsyncTypebox = async (app) => {
  app.addSchema(ErrorEnvelope);
  app.addSchema(UserSchema);
  // The API reads JSON (and HTML-form bodies, as Laravel does); Fastify's built-in text/plain
  // parser would hand a string to the validator, so such a body is a 415 here, not a 422.
  app.removeContentTypeParser('text/plain');

  // A POST or PUT without a body is validated as an empty object, so the client learns which
  // fields are required rather than that "the body must be an object".
  app.addHook('preValidation', async (request) => {
    if (request.body === undefined || request.body === null) request.body = {};
  });

  await app.register(tokenRoutes);
  await app.register(userRoutes);
  // Public reads carry an ETag and answer If-None-Match with 304.
  await app.register(async (publicReads) => {
    await publicReads.register(etag, { weak: true });
    await publicReads.register(postRoutes);
    await publicReads.register(settingsRoutes);
  });
};
