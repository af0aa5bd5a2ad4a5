// Every user's personal access tokens: name, abilities, last use, expiry. One token, or all of
// a user's, can be revoked after a confirmation step. The token hash never reaches a page.
import type { FastifyPluginAsync, FastifyRequest } from 'fastify';
import type { User } from '../../db/types.js';
import { TOKEN_SORTS } from '../../modules/admin/admin.repository.js';
import type { TokenListItem } from '../../modules/admin/admin.service.js';
import { parseListParams } from '../../modules/admin/listing.js';
import { t } from '../../modules/i18n/translator.js';
import { notFound } from '../../modules/shared/errors.js';
import { done, localeFor } from '../shared/forms.js';
import { acting, adminPage, idParam, tableLinks } from './support.js';

export const tokenRoutes: FastifyPluginAsync = async (app) => {
  const tokenOr404 = async (request: FastifyRequest): Promise<TokenListItem> => {
    const token = await app.services.admin.findToken(idParam(request));
    if (token === undefined) throw notFound();
    return token;
  };
  const userOr404 = async (request: FastifyRequest): Promise<User> => {
    const user = await app.services.admin.findUser(idParam(request));
    if (user === undefined) throw notFound();
    return user;
  };

  app.get('/tokens', { config: { auth: 'admin' } }, async (request, reply) => {
    const params = parseListParams(request.query, TOKEN_SORTS, { sort: 'created_at', dir: 'desc' });
    const rawUser = (request.query as Record<string, unknown>).user;
    const userId = typeof rawUser === 'string' && /^\d{1,15}$/.test(rawUser) ? Number(rawUser) : null;
    const owner = userId === null ? undefined : await app.services.admin.findUser(userId);
    const filterId = owner === undefined ? null : owner.id;
    const result = await app.services.admin.tokens({ ...params, userId: filterId }, params.page, params.perPage);
    return adminPage(request, reply, 'admin/tokens/index', 'tokens', {
      title: t(localeFor(app, request), 'admin.nav.tokens'),
      params,
      owner: owner === undefined ? null : { id: owner.id, name: owner.name, email: owner.email },
      result,
      links: tableLinks('/admin/tokens', params, { user: filterId }),
    });
  });

  app.get('/tokens/:id/revoke', { config: { auth: 'admin' } }, async (request, reply) => {
    const locale = localeFor(app, request);
    const token = await tokenOr404(request);
    return adminPage(request, reply, 'admin/confirm', 'tokens', {
      title: t(locale, 'admin.tokens.revoke_title'),
      message: t(locale, 'admin.tokens.revoke_confirm', { name: token.name, email: token.user_email }),
      action: `/admin/tokens/${token.id}/revoke`,
      button: t(locale, 'admin.tokens.revoke'),
      cancel: '/admin/tokens',
    });
  });

  app.post('/tokens/:id/revoke', { config: { auth: 'admin' } }, async (request, reply) => {
    const locale = localeFor(app, request);
    const token = await tokenOr404(request);
    await app.services.admin.revokeToken(acting(request), token);
    return done(request, reply, `/admin/tokens?user=${token.user_id}`, t(locale, 'admin.tokens.revoked', { name: token.name }));
  });

  app.get('/tokens/users/:id/revoke', { config: { auth: 'admin' } }, async (request, reply) => {
    const locale = localeFor(app, request);
    const user = await userOr404(request);
    return adminPage(request, reply, 'admin/confirm', 'tokens', {
      title: t(locale, 'admin.tokens.revoke_all_title'),
      message: t(locale, 'admin.tokens.revoke_all_confirm', { name: user.name, email: user.email }),
      action: `/admin/tokens/users/${user.id}/revoke`,
      button: t(locale, 'admin.tokens.revoke_all'),
      cancel: `/admin/tokens?user=${user.id}`,
    });
  });

  app.post('/tokens/users/:id/revoke', { config: { auth: 'admin' } }, async (request, reply) => {
    const locale = localeFor(app, request);
    const user = await userOr404(request);
    const count = await app.services.admin.revokeAllTokens(acting(request), user);
    return done(request, reply, `/admin/tokens?user=${user.id}`, t(locale, 'admin.tokens.revoked_all', { count, name: user.name }));
  });
};
