// GET /profile and its two forms: name + email (POST /profile) and password
// (POST /profile/password), with the JSON API's rules. Behind 'verified'.
import { Type } from '@sinclair/typebox';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { t } from '../../modules/i18n/translator.js';
import { assertValid, done, field, localeFor, schemaErrors } from '../shared/forms.js';
import { submit } from './forms.js';
import { hasRememberCookie, rememberDevice } from './remember.js';

const ProfileBody = Type.Object({
  name: Type.String({ minLength: 1, maxLength: 255 }),
  email: Type.String({ format: 'email', minLength: 1, maxLength: 255 }),
});

const PasswordBody = Type.Object({
  current_password: Type.String({ minLength: 1, maxLength: 4096 }),
  password: Type.String({ minLength: 1, maxLength: 4096 }),
  password_confirmation: Type.Optional(Type.String({ maxLength: 4096 })),
});

export async function profileRoutes(app: FastifyInstance): Promise<void> {
  const current = async (request: FastifyRequest) => {
    const user = await app.services.users.findById(request.siteUser!.id);
    if (user === undefined) throw new Error('the logged-in user vanished');
    return user;
  };
  const page = (user: { name: string; email: string }) => ({ template: 'profile', keep: ['name', 'email'], data: { profile: { name: user.name, email: user.email } } });

  app.get('/profile', { config: { auth: 'verified' } }, async (request, reply) => {
    const user = await current(request);
    return reply.page('profile', { profile: { name: user.name, email: user.email } });
  });

  app.post('/profile', { config: { auth: 'verified' }, schema: { body: ProfileBody }, attachValidation: true }, async (request, reply) => {
    const user = await current(request);
    return submit(request, reply, page(user), async () => {
      const locale = localeFor(app, request);
      assertValid(request, locale);
      const result = await app.services.auth.updateProfile(user, { name: field(request, 'name'), email: field(request, 'email') }, locale);
      // A new address must be proven before the pages behind 'verified' open again.
      if (result.emailChanged && app.config.mustVerifyEmail) return done(request, reply, '/email/verify', t(locale, 'verification.sent_new'));
      return done(request, reply, '/profile', t(locale, 'profile.saved'));
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
      await app.services.auth.changePassword(user, input, locale, schemaErrors(request, locale));
      // Every session, device and token is gone; this browser stays logged in, under a new id.
      const remembered = hasRememberCookie(request);
      await app.loginSite(request, user);
      if (remembered) await rememberDevice(app, reply, user.id);
      return done(request, reply, '/profile', t(locale, 'profile.password_updated'));
    });
  });
}
