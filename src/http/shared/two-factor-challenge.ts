// The code step of a sign-in with two-factor on, as the site (src/http/web/two-factor-challenge.ts)
// and the panel (src/http/admin/login.ts) share it: the pending challenge put in the session after
// the password, the form's fields, and the way back to the password when the challenge is gone.
import { Type } from '@sinclair/typebox';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { User } from '../../db/types.js';
import { newChallenge, type ChallengeChannel, type ChallengeInput } from '../../modules/auth/two-factor-challenge.js';
import { t } from '../../modules/i18n/translator.js';
import { ValidationError } from '../../modules/shared/errors.js';
import { flash } from '../../plugins/views.js';
import { wantsJson } from '../../plugins/web-guard.js';
import { assertValid, field, localeFor } from './forms.js';

/** The challenge form: a code or a recovery code (lengths bounded, the format is the module's). */
export const ChallengeBody = Type.Object({
  code: Type.Optional(Type.String({ maxLength: 64 })),
  recovery_code: Type.Optional(Type.String({ maxLength: 128 })),
});

/**
 * After a correct first factor (`method`: a password, a provider) for an account with two-factor
 * on (http/shared/sign-in.ts decides, after the pipeline): a new session id (as at a sign-in,
 * so a planted id is worth nothing) holding the pending challenge and nothing of the password.
 * On the site only what a sign-in keeps stays (the panel's login, the intended page); the CSRF
 * secret stays too, so an SPA's XSRF token still passes on the code step. On the panel the site's
 * login stays.
 */
export async function startChallenge(request: FastifyRequest, user: Pick<User, 'id'>, channel: ChallengeChannel, remember = false, method = 'password'): Promise<void> {
  const keep = channel === 'site' ? ['adminUserId', 'intended', 'flash', '_csrf'] : Object.keys(request.session).filter((key) => key !== 'cookie' && key !== 'twoFactorChallenge');
  await request.session.regenerate(keep);
  request.session.twoFactorChallenge = newChallenge(user.id, remember, channel, method);
}

/** What the challenge form sent. */
export function challengeInput(request: FastifyRequest): ChallengeInput {
  return { code: field(request, 'code'), recoveryCode: field(request, 'recovery_code') };
}

/**
 * The form's own checks, made before the challenge is looked at (validate, then act): the
 * schema's, and a code or a recovery code given. An empty form is a 422 whatever the session.
 */
export function assertChallengeInput(request: FastifyRequest, locale: string): void {
  assertValid(request, locale);
  const { code, recoveryCode } = challengeInput(request);
  if (code.trim() === '' && recoveryCode.trim() === '') {
    const recovery = recoveryMode(request);
    throw new ValidationError({ [recovery ? 'recovery_code' : 'code']: [t(locale, recovery ? 'two_factor_challenge.recovery_required' : 'two_factor_challenge.code_required')] });
  }
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
