// The panel's home: the figures that matter, the latest posts and the latest audit lines (the
// whole log, filtered, is audit.ts).
import type { FastifyPluginAsync } from 'fastify';
import { t } from '../../modules/i18n/translator.js';
import { localeFor } from '../shared/forms.js';
import { adminPage } from './support.js';

export const dashboardRoutes: FastifyPluginAsync = async (app) => {
  app.get('/', { config: { auth: 'admin' } }, async (request, reply) => {
    const [stats, posts, audit] = await Promise.all([
      app.services.admin.dashboard(),
      app.services.admin.latestPosts(5),
      app.services.audit.latest(10),
    ]);
    return adminPage(request, reply, 'admin/dashboard', 'dashboard', { title: t(localeFor(app, request), 'admin.nav.dashboard'), stats, posts, audit });
  });
};
