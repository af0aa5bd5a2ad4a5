// The panel's home: the figures that matter, the latest posts and the latest audit lines; and
// the whole audit log, page by page.
import type { FastifyPluginAsync } from 'fastify';
import { parseListParams } from '../../modules/admin/listing.js';
import { t } from '../../modules/i18n/translator.js';
import { localeFor } from '../shared/forms.js';
import { adminPage, tableLinks } from './support.js';

export const dashboardRoutes: FastifyPluginAsync = async (app) => {
  app.get('/', { config: { auth: 'admin' } }, async (request, reply) => {
    const [stats, posts, audit] = await Promise.all([
      app.services.admin.dashboard(),
      app.services.admin.latestPosts(5),
      app.services.audit.latest(10),
    ]);
    return adminPage(request, reply, 'admin/dashboard', 'dashboard', { title: t(localeFor(app, request), 'admin.nav.dashboard'), stats, posts, audit });
  });

  app.get('/audit', { config: { auth: 'admin' } }, async (request, reply) => {
    const params = parseListParams(request.query, ['created_at'] as const, { sort: 'created_at', dir: 'desc' }, 25);
    const result = await app.services.audit.page(params.page, params.perPage);
    return adminPage(request, reply, 'admin/audit/index', 'audit', {
      title: t(localeFor(app, request), 'admin.nav.audit'),
      result,
      links: tableLinks('/admin/audit', params),
    });
  });
};
