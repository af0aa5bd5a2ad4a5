// The panel's own sign-in: /admin/login and /admin/logout. It sets and clears only
// session.adminUserId, so signing in or out here leaves the site's login (session.userId) as it
// is, and the site's login never opens the panel. Both steps go through the sign-in pipeline
// (modules/sign-in: administrators only, throttled, audited): with two-factor on, the password
// only opens the code step, /admin/two-factor-challenge, and the sign-in happens there.
import { Type } from '@sinclair/typebox';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { liveChallenge } from '../../modules/auth/two-factor-challenge.js';
import { t } from '../../modules/i18n/translator.js';
import { done, field, localeFor, oldInput, refusal, schemaErrors } from '../shared/forms.js';
import { answerSignIn, finishSignIn, regenerateKeeping, signInContext } from '../shared/sign-in.js';
import { ChallengeBody, assertChallengeInput, challengeGone, challengeInput, recoveryMode } from '../shared/two-factor-challenge.js';
import { adminPage } from './support.js';

const LoginBody = Type.Object({
  email: Type.String({ minLength: 1, maxLength: 255, format: 'email' }),
  password: Type.String({ minLength: 1, maxLength: 1024 }),
});

export const loginRoutes: FastifyPluginAsyncTypebox = async (app) => {
  app.get('/login', { config: { auth: 'admin-guest' } }, async (request, reply) =>
    adminPage(request, reply, 'admin/login', null, { title: t(localeFor(app, request), 'admin.login.title') }),
  );

  app.post('/login', { config: { auth: 'admin-guest' }, schema: { body: LoginBody }, attachValidation: true }, async (request, reply) => {
    const locale = localeFor(app, request);
    try {
      const { signIn } = app.services;
      const proof = { email: field(request, 'email'), password: field(request, 'password'), earlier: schemaErrors(request, locale) };
      const outcome = await signIn.attempt(signIn.methods.password, proof, signInContext(app, request, 'panel'));
      return answerSignIn(request, reply, await finishSignIn(app, request, reply, outcome));
    } catch (error) {
      const refused = refusal(error, locale);
      void reply.headers(refused.headers);
      return adminPage(request, reply, 'admin/login', null, { title: t(locale, 'admin.login.title'), errors: refused.errors, old: oldInput(request.body) }, refused.status);
    }
  });

  const challengePage = (request: FastifyRequest, reply: FastifyReply, data: Record<string, unknown> = {}, status = 200) =>
    adminPage(request, reply, 'admin/two-factor-challenge', null, { title: t(localeFor(app, request), 'two_factor_challenge.title'), recovery: recoveryMode(request), ...data }, status);

  app.get('/two-factor-challenge', { config: { auth: 'admin-guest' } }, async (request, reply) => {
    if (liveChallenge(request.session.twoFactorChallenge, 'panel') === null) return challengeGone(app, request, reply, '/admin/login');
    return challengePage(request, reply);
  });

  app.post('/two-factor-challenge', { config: { auth: 'admin-guest' }, schema: { body: ChallengeBody }, attachValidation: true }, async (request, reply) => {
    const locale = localeFor(app, request);
    try {
      assertChallengeInput(request, locale);
      const challenge = liveChallenge(request.session.twoFactorChallenge, 'panel');
      if (challenge === null) return challengeGone(app, request, reply, '/admin/login');
      const signedIn = await app.services.signIn.secondFactor(challenge, challengeInput(request), signInContext(app, request, 'panel'));
      if (signedIn === null) return challengeGone(app, request, reply, '/admin/login');
      delete request.session.twoFactorChallenge;
      return answerSignIn(request, reply, await finishSignIn(app, request, reply, signedIn));
    } catch (error) {
      const refused = refusal(error, locale);
      void reply.headers(refused.headers);
      return challengePage(request, reply, { errors: refused.errors }, refused.status);
    }
  });

  // 'public', not 'admin': an administrator demoted meanwhile (403 everywhere else) must still be
  // able to sign out. CSRF is checked all the same.
  app.post('/logout', { config: { auth: 'public' } }, async (request, reply) => {
    const id = request.session.adminUserId;
    await app.services.auth.panelLogout(typeof id === 'number' ? id : undefined, request.ip);
    if (id !== undefined) await regenerateKeeping(request, ['adminUserId']);
    return done(request, reply, '/admin/login', t(localeFor(app, request), 'admin.logout.done'));
  });
};
