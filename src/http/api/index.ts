// The JSON API under /api. Every route answers JSON; every failure is the error envelope.
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { postRoutes } from './posts.js';
import { ErrorEnvelope } from '../shared/schemas.js';
import { UserSchema } from './schemas.js';
import { settingsRoutes } from './settings.js';
import { tokenRoutes } from './tokens.js';
import { userRoutes } from './user.js';
import { namePlugins } from '../shared/plugin-names.js';

// Display names for Fastify, which otherwise searches require.cache for each (shared/plugin-names.ts).
namePlugins({ tokenRoutes, userRoutes, postRoutes, settingsRoutes });

export const apiRoutes: FastifyPluginAsyncTypebox = async (app) => {
  app.addSchema(ErrorEnvelope);
  app.addSchema(UserSchema);
  // The API reads JSON (and HTML-form bodies, as Laravel does); Fastify's built-in text/plain
  // parser would hand a string to the validator, so such a body is a 415 here, not a 422.
  app.removeContentTypeParser('text/plain');

  await app.register(tokenRoutes);
  await app.register(userRoutes);
  // The public reads declare `cache: { public: 0 }`: an ETag, a 304 for a matching
  // If-None-Match, and revalidated on every use (a client that has just written reads its change).
  await app.register(postRoutes);
  await app.register(settingsRoutes);
};
