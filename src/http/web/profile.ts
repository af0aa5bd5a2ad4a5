// GET /profile and its two forms: the name (POST /profile) and the password
// (POST /profile/password), with the JSON API's rules. Behind 'verified'. The email address is
// changed from the security page, through a link mailed to the new address (email-change.ts);
// POST /profile still takes an `email` (older forms, scripts with a session), and a different
// one goes through that same pending change and password confirmation. PUT /api/user goes
// through the same owner (AuthService.updateProfile), with the current password as its proof.
import { normalizeIP } from '@fastify/rate-limit';
import { Type } from '@sinclair/typebox';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { t } from '../../modules/i18n/translator.js';
import { userOfRequest } from '../../plugins/web-guard.js';
import { assertValid, done, field, localeFor, schemaErrors } from '../shared/forms.js';
import { requirePasswordConfirmed } from './confirm-password.js';
import { submit } from './forms.js';
import { hasRememberCookie, rememberDevice } from './remember.js';

const ProfileBody = Type.Object({
  name: Type.String({ minLength: 1, maxLength: 255 }),
  email: Type.Optional(Type.String({ format: 'email', minLength: 1, maxLength: 255 })),
});

const PasswordBody = Type.Object({
  current_password: Type.String({ minLength: 1, maxLength: 4096 }),
  password: Type.String({ minLength: 1, maxLength: 4096 }),
  password_confirmation: Type.Optional(Type.String({ maxLength: 4096 })),
});

export async function profileRoutes(app: FastifyInstance): Promise<void> {
  const current = async (request: FastifyRequest) => {
    const user = await userOfRequest(app, request, request.siteUser!.id);
    if (user === undefined) throw new Error('the logged-in user vanished');
    return user;
  };
  // mustVerify words the banner an unverified user sees here (reachable without MUST_VERIFY_EMAIL).
  const pageData = (user: { name: string; email: string }) => ({ profile: { name: user.name, email: user.email }, mustVerify: app.config.mustVerifyEmail });
  const page = (user: { name: string; email: string }) => ({ template: 'profile', keep: ['name', 'email'], data: pageData(user) });

  app.get('/profile', { config: { auth: 'verified' } }, async (request, reply) => reply.page('profile', pageData(await current(request))));

  app.post('/profile', { config: { auth: 'verified' }, schema: { body: ProfileBody }, attachValidation: true }, async (request, reply) => {
    const user = await current(request);
    const email = field(request, 'email');
    const changesEmail = email !== '' && email !== user.email;
    // A new address is a sensitive change: the password first (nothing is saved before it).
    if (changesEmail && request.validationError === undefined) {
      await requirePasswordConfirmed(app)(request, reply);
      if (reply.sent) return reply;
    }
    return submit(request, reply, page(user), async () => {
      const locale = localeFor(app, request);
      assertValid(request, locale);
      // The password was confirmed above (requirePasswordConfirmed) before any new address.
      await app.services.auth.updateProfile(user, { name: field(request, 'name'), ...(changesEmail ? { email } : {}) }, locale, 'password-confirmed');
      return done(request, reply, '/profile', changesEmail ? t(locale, 'email_change.sent', { email }) : t(locale, 'profile.saved'));
    });
  });

  app.post('/profile/password', { config: { auth: 'verified' }, schema: { body: PasswordBody }, attachValidation: true }, async (request, reply) => {
    const user = await current(request);
    return submit(request, reply, { ...page(user), keep: [] }, async () => {
      const locale = localeFor(app, request);
      const input = {
        current_password: field(request, 'current_password'),
        password: field(request, 'password'),
        password_confirmation: field(request, 'password_confirmation'),
      };
      // Tries counted by client as the sign-in pipeline and the API count them (an IPv6 one by its /64).
      await app.services.auth.changePassword(user, input, locale, normalizeIP(request.ip), schemaErrors(request, locale));
      // Every session, device and token is gone; this browser stays logged in, under a new id.
      const remembered = hasRememberCookie(request);
      await app.loginSite(request, user);
      if (remembered) await rememberDevice(app, reply, user.id);
      return done(request, reply, '/profile', t(locale, 'profile.password_updated'));
    });
  });
}
