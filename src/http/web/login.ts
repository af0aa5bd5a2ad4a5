// GET /login, POST /login: email + password (+ remember), throttled per email + IP. With
// two-factor on, a correct password only opens the code step (two-factor-challenge.ts): a page
// redirect for a browser, `{"two_factor": true}` for an SPA (Fortify's answer).
import { Type } from '@sinclair/typebox';
import type { FastifyInstance } from 'fastify';
import { twoFactorEnabled } from '../../modules/two-factor/two-factor.service.js';
import { wantsJson } from '../../plugins/web-guard.js';
import { checked, done, field, localeFor, schemaErrors } from '../shared/forms.js';
import { startChallenge } from '../shared/two-factor-challenge.js';
import { submit, takeIntended } from './forms.js';
import { completeSiteSignIn } from './sign-in.js';
import { CHALLENGE_PATH } from './two-factor-challenge.js';

// The spec's login rules: a valid email, a password of at least 6 characters. The email's format
// is judged by AuthService.login on its normalized spelling (see there).
const LoginBody = Type.Object({
  email: Type.String({ minLength: 1, maxLength: 255 }),
  password: Type.String({ minLength: 6, maxLength: 4096 }),
  remember: Type.Optional(Type.Union([Type.Boolean(), Type.String({ maxLength: 10 })])),
});

export async function loginRoutes(app: FastifyInstance): Promise<void> {
  const page = { template: 'auth/login', keep: ['email', 'remember'] } as const;

  app.get('/login', { config: { auth: 'guest' } }, async (_request, reply) => reply.page(page.template));

  app.post('/login', { config: { auth: 'guest', spa: true }, schema: { body: LoginBody }, attachValidation: true }, async (request, reply) =>
    submit(request, reply, page, async () => {
      const locale = localeFor(app, request);
      const user = await app.services.auth.login(field(request, 'email'), field(request, 'password'), request.ip, locale, schemaErrors(request, locale));
      if (twoFactorEnabled(user)) {
        await startChallenge(request, user, 'site', checked(request, 'remember'));
        if (wantsJson(request)) return reply.code(200).header('cache-control', 'no-store').send({ two_factor: true });
        return reply.redirect(CHALLENGE_PATH, 303);
      }
      await completeSiteSignIn(app, request, reply, user, { remember: checked(request, 'remember'), method: 'password' });
      return done(request, reply, takeIntended(request) ?? '/dashboard');
    }),
  );
}
