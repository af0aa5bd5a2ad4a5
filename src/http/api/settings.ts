// GET /api/settings: the site's own settings, typed, and the public custom ones; never a private one.
import { Type } from '@sinclair/typebox';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { errorResponses } from '../shared/schemas.js';
import { EXAMPLE_SETTINGS, SiteSettingsSchema } from './schemas.js';

export const settingsRoutes: FastifyPluginAsyncTypebox = async (app) => {
  app.get(
    '/settings',
    {
      config: { auth: 'public', cache: { public: 0 } },
      schema: {
        summary: 'Public site settings',
        description:
          "The site's own settings are always present, each with its type (posts_per_page an integer, home_api_card a boolean, locales a list); the defaults apply where one is not set. Public custom settings follow as stored. Private settings never appear.",
        tags: ['settings'],
        response: { 200: Type.Object({ data: SiteSettingsSchema }, { examples: [{ data: EXAMPLE_SETTINGS }] }), ...errorResponses() },
      },
    },
    async () => ({ data: await app.services.settings.publicSettings() }),
  );
};
