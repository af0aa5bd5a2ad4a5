// The security page's "Delete account" section and POST /user/delete (password confirmed): the
// account and every way into it go (modules/account-deletion), the audit log keeps the event,
// and this browser is logged out and sent home.
import type { FastifyInstance } from 'fastify';
import { AccountDeletionService } from '../../modules/account-deletion/account-deletion.service.js';
import { t } from '../../modules/i18n/translator.js';
import { done, localeFor } from '../shared/forms.js';
import { requirePasswordConfirmed } from './confirm-password.js';
import { forgetDevice } from './remember.js';
import { addSecuritySection, currentUser } from './security.js';

export async function accountDeleteRoutes(app: FastifyInstance): Promise<void> {
  const deletion = new AccountDeletionService(app.db, app.services.audit);

  addSecuritySection(app, { order: 90, template: '/security/delete-account', load: async () => ({}) });

  app.post('/user/delete', { config: { auth: 'verified' }, preHandler: requirePasswordConfirmed(app) }, async (request, reply) => {
    const locale = localeFor(app, request);
    await deletion.delete(await currentUser(app, request), request.ip);
    await forgetDevice(app, request, reply);
    // The old session row went with the account; a fresh one, with no user, carries the status
    // message to the home page.
    await request.session.regenerate([]);
    return done(request, reply, '/', t(locale, 'account.deleted'));
  });
}
