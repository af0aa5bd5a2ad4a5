// Forgotten passwords (Breeze's PasswordResetLinkController and NewPasswordController):
// GET/POST /forgot-password mails a link and answers the same whether or not the account
// exists; GET /reset-password/{token} shows the form; POST /reset-password sets the password.
import { Type } from '@sinclair/typebox';
import type { FastifyInstance } from 'fastify';
import { t } from '../../modules/i18n/translator.js';
import { assertValid, done, field, localeFor } from '../shared/forms.js';
import { submit } from './forms.js';
import { ForgotPasswordContract, ResetPasswordContract } from './spa-contract.js';

const ForgotBody = Type.Object({
  email: Type.String({ format: 'email', minLength: 1, maxLength: 255 }),
});

const ResetBody = Type.Object({
  token: Type.String({ minLength: 1, maxLength: 255 }),
  email: Type.String({ format: 'email', minLength: 1, maxLength: 255 }),
  password: Type.String({ minLength: 1, maxLength: 4096 }),
  password_confirmation: Type.Optional(Type.String({ maxLength: 4096 })),
});

export async function passwordResetRoutes(app: FastifyInstance): Promise<void> {
  const forgot = { template: 'auth/forgot-password', keep: ['email'] } as const;

  app.get('/forgot-password', { config: { auth: 'guest' } }, async (_request, reply) => reply.guestForm(forgot.template));

  app.post('/forgot-password', { config: { auth: 'guest', spa: true }, schema: { ...ForgotPasswordContract, body: ForgotBody }, attachValidation: true }, async (request, reply) =>
    submit(request, reply, forgot, async () => {
      const locale = localeFor(app, request);
      assertValid(request, locale);
      // Looked up, written and mailed once the answer is out (session saved and sent), so a
      // known address takes no longer and its work does not compete with the answer's.
      const email = field(request, 'email');
      let started = false;
      const start = () => {
        if (started) return;
        started = true;
        app.services.mail.defer('password reset link', () => app.services.passwordResets.requestLink(email, locale));
      };
      reply.raw.once('finish', start).once('close', start);
      // The same words for an unknown address: the page must not tell who has an account.
      return done(request, reply, '/forgot-password', t(locale, 'passwords.sent'));
    }),
  );

  app.get<{ Params: { token: string }; Querystring: { email?: string } }>(
    '/reset-password/:token',
    { config: { auth: 'guest' } },
    async (request, reply) => {
      const email = typeof request.query.email === 'string' ? request.query.email : '';
      return reply.page('auth/reset-password', { token: request.params.token, old: { email } });
    },
  );

  app.post('/reset-password', { config: { auth: 'guest', spa: true }, schema: { ...ResetPasswordContract, body: ResetBody }, attachValidation: true }, async (request, reply) => {
    const token = field(request, 'token');
    return submit(request, reply, { template: 'auth/reset-password', keep: ['email'], data: { token } }, async () => {
      const locale = localeFor(app, request);
      assertValid(request, locale);
      const input = { token, email: field(request, 'email'), password: field(request, 'password'), password_confirmation: field(request, 'password_confirmation') };
      await app.services.passwordResets.reset(input, locale);
      return done(request, reply, '/login', t(locale, 'passwords.reset'));
    });
  });
}
