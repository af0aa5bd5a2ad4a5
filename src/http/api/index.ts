// The JSON API under /api. Every route answers JSON; every failure is the error envelope.
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { publicReadEtags } from '../shared/etag.js';
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
    await publicReadEtags(publicReads);
    await publicReads.register(postRoutes);
    await publicReads.register(settingsRoutes);
  });
};
