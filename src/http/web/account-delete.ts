// The security page's "Delete account" section, its confirmation page (GET /user/delete) and
// POST /user/delete, both behind a fresh password confirmation: the account and every way into
// it go (modules/account-deletion), the audit log keeps the event, and this browser is logged
// out and sent home.
import type { FastifyInstance } from 'fastify';
import { t } from '../../modules/i18n/translator.js';
import { done, localeFor } from '../shared/forms.js';
import { requirePasswordConfirmed } from './confirm-password.js';
import { forgetDevice } from './remember.js';
import { addSecuritySection, currentUser } from './security.js';

export async function accountDeleteRoutes(app: FastifyInstance): Promise<void> {
  addSecuritySection(app, { order: 90, template: '/security/delete-account', load: async () => ({}) });

  // The confirmation page: the section links here, the password is asked for on the way.
  app.get('/user/delete', { config: { auth: 'verified' }, preHandler: requirePasswordConfirmed(app) }, async (_request, reply) =>
    reply.page('security/delete-account', { standalone: true }),
  );

  app.post('/user/delete', { config: { auth: 'verified' }, preHandler: requirePasswordConfirmed(app) }, async (request, reply) => {
    const locale = localeFor(app, request);
    await app.services.accountDeletion.deleteOwnAccount(await currentUser(app, request), request.ip);
    await forgetDevice(app, request, reply);
    // The old session row went with the account; a fresh one, with no user, carries the status
    // message to the home page.
    await request.session.regenerate([]);
    return done(request, reply, '/', t(locale, 'account.deleted'));
  });
}
