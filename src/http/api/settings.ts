// GET /api/settings: the public settings only.
import { Type } from '@sinclair/typebox';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { errorResponses } from '../shared/schemas.js';

export const settingsRoutes: FastifyPluginAsyncTypebox = async (app) => {
  app.get(
    '/settings',
    {
      config: { auth: 'public' },
      schema: {
        summary: 'Public site settings',
        description: 'At least site_name, site_description, default_locale and locales. Private settings never appear.',
        tags: ['settings'],
        response: { 200: Type.Object({ data: Type.Record(Type.String(), Type.Unknown()) }), ...errorResponses() },
      },
    },
    async () => ({ data: await app.services.settings.publicSettings() }),
  );
};
