// GET/POST /two-factor-challenge: the code step of the site's sign-in when two-factor is on
// (Fortify's two-factor-challenge). POST /login leaves only a pending challenge in the session
// (startChallenge); this step checks the code or a recovery code and completes the sign-in. The
// panel's own step (src/http/admin/login.ts) uses the same helpers.
import { Type } from '@sinclair/typebox';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { User } from '../../db/types.js';
import { liveChallenge, newChallenge, passChallenge, type ChallengeChannel, type ChallengeInput, type TwoFactorChallenge } from '../../modules/auth/two-factor-challenge.js';
import { t } from '../../modules/i18n/translator.js';
import { ValidationError } from '../../modules/shared/errors.js';
import { flash } from '../../plugins/views.js';
import { wantsJson } from '../../plugins/web-guard.js';
import { assertValid, done, field, localeFor } from '../shared/forms.js';
import { submit, takeIntended } from './forms.js';
import { completeSiteSignIn, regenerateKeeping } from './sign-in.js';

export const CHALLENGE_PATH = '/two-factor-challenge';

declare module 'fastify' {
  interface Session {
    /** A sign-in waiting for its second factor (never the password, never a signed-in user). */
    twoFactorChallenge?: TwoFactorChallenge;
  }
}

/** The challenge form: a code or a recovery code (lengths bounded, the format is the module's). */
export const ChallengeBody = Type.Object({
  code: Type.Optional(Type.String({ maxLength: 64 })),
  recovery_code: Type.Optional(Type.String({ maxLength: 128 })),
});

/**
 * After a correct password for an account with two-factor on: a new session id (as at a sign-in,
 * so a planted id is worth nothing) holding the pending challenge and nothing of the password.
 * On the site only what a sign-in keeps stays (the panel's login, the intended page); the CSRF
 * secret stays too, so an SPA's XSRF token still passes on the code step. On the panel the site's
 * login stays.
 */
export async function startChallenge(request: FastifyRequest, user: Pick<User, 'id'>, channel: ChallengeChannel, remember = false): Promise<void> {
  if (channel === 'site') await request.session.regenerate(['adminUserId', 'intended', 'flash', '_csrf']);
  else await regenerateKeeping(request, ['twoFactorChallenge']);
  request.session.twoFactorChallenge = newChallenge(user.id, remember, channel);
}

/** What the challenge form sent. */
export function challengeInput(request: FastifyRequest): ChallengeInput {
  return { code: field(request, 'code'), recoveryCode: field(request, 'recovery_code') };
}

/** Whether the form in use is the recovery-code one (`?recovery=1`, or a recovery code posted). */
export function recoveryMode(request: FastifyRequest): boolean {
  const query = request.query as Record<string, unknown> | undefined;
  return query?.recovery === '1' || (field(request, 'code') === '' && field(request, 'recovery_code') !== '');
}

/**
 * No live challenge (none, expired, or of an account gone): back to the password, with a message.
 * A script gets a 422 on `code` saying so (Fortify answers a missing challenge the same way).
 */
export function challengeGone(app: FastifyInstance, request: FastifyRequest, reply: FastifyReply, loginPath: string): FastifyReply {
  const message = t(localeFor(app, request), 'two_factor_challenge.expired');
  delete request.session.twoFactorChallenge;
  if (wantsJson(request)) throw new ValidationError({ code: [message] });
  flash(request, { status: message });
  return reply.redirect(loginPath, request.method === 'GET' ? 302 : 303);
}

export async function twoFactorChallengeRoutes(app: FastifyInstance): Promise<void> {
  const page = (request: FastifyRequest) => ({ template: 'auth/two-factor-challenge', keep: [], data: { recovery: recoveryMode(request) } });

  app.get(CHALLENGE_PATH, { config: { auth: 'guest' } }, async (request, reply) => {
    if (liveChallenge(request.session.twoFactorChallenge, 'site') === null) return challengeGone(app, request, reply, '/login');
    return reply.page('auth/two-factor-challenge', { recovery: recoveryMode(request) });
  });

  app.post(CHALLENGE_PATH, { config: { auth: 'guest' }, schema: { body: ChallengeBody }, attachValidation: true }, async (request, reply) => {
    const challenge = liveChallenge(request.session.twoFactorChallenge, 'site');
    if (challenge === null) return challengeGone(app, request, reply, '/login');
    return submit(request, reply, page(request), async () => {
      const locale = localeFor(app, request);
      assertValid(request, locale);
      const user = await passChallenge(app.services, challenge, challengeInput(request), request.ip, locale);
      if (user === null) return challengeGone(app, request, reply, '/login');
      delete request.session.twoFactorChallenge;
      await completeSiteSignIn(app, request, reply, user, { remember: challenge.remember, method: 'two-factor' });
      return done(request, reply, takeIntended(request) ?? '/dashboard');
    });
  });
}
