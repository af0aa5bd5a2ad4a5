// Email verification (Breeze's EmailVerificationPromptController, VerifyEmailController and
// EmailVerificationNotificationController): the notice, the resend action (throttled) and the
// signed link itself. The resend button is also on the banner an unverified user sees on the
// dashboard and the profile; it comes back to the page it was pressed on.
import type { FastifyInstance } from 'fastify';
import { t } from '../../modules/i18n/translator.js';
import { VERIFY_LINK_MINUTES } from '../../modules/verification/verification.service.js';
import { safeBackPath } from '../shared/back-path.js';
import { done, localeFor } from '../shared/forms.js';
import { submit } from './forms.js';
import { VerificationNotificationContract } from './spa-contract.js';

const NOTICE_PATH = '/email/verify';

export async function verifyEmailRoutes(app: FastifyInstance): Promise<void> {
  const notice = { template: 'auth/verify-email', keep: [], data: { mustVerify: app.config.mustVerifyEmail } } as const;

  app.get(NOTICE_PATH, { config: { auth: 'user' } }, async (request, reply) => {
    if (request.siteUser?.email_verified_at !== null) return reply.redirect('/dashboard', 302);
    return reply.page(notice.template, notice.data);
  });

  app.post('/email/verification-notification', { config: { auth: 'user', spa: true }, schema: VerificationNotificationContract }, async (request, reply) =>
    submit(request, reply, notice, async () => {
      const user = await app.services.users.findById(request.siteUser!.id);
      if (user === undefined || user.email_verified_at !== null) return done(request, reply, '/dashboard');
      const locale = localeFor(app, request);
      await app.services.auth.resendVerification(user, locale);
      const back = safeBackPath(request.headers.referer, app.config.appUrl, NOTICE_PATH);
      return done(request, reply, back, t(locale, 'unverified.sent', { email: user.email, minutes: VERIFY_LINK_MINUTES }));
    }),
  );

  // Laravel's route: the link needs the user logged in (a visitor is sent to /login and brought
  // back here), then the signature, the expiry, the id and the hash are all checked.
  app.get<{ Params: { id: string; hash: string } }>('/email/verify/:id/:hash', { config: { auth: 'user' } }, async (request, reply) => {
    const locale = localeFor(app, request);
    const user = await app.services.users.findById(request.siteUser!.id);
    if (user === undefined) return reply.redirect('/login', 302);
    const verified = await app.services.verification.verify(user, request.params, request.url, locale);
    // A verified address is a new privilege (the pages behind 'verified'): a new session id.
    if (verified) await app.loginSite(request, user);
    return done(request, reply, '/dashboard', t(locale, verified ? 'verification.verified' : 'verification.already'));
  });
}
