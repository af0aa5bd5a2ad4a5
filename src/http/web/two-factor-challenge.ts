// GET/POST /two-factor-challenge: the code step of the site's sign-in when two-factor is on
// (Fortify's two-factor-challenge). POST /login leaves only a pending challenge in the session
// (startChallenge in src/http/shared/two-factor-challenge.ts); this step checks the code or a
// recovery code and completes the sign-in. The panel's own step is in src/http/admin/login.ts.
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { liveChallenge, passChallenge } from '../../modules/auth/two-factor-challenge.js';
import { done, localeFor } from '../shared/forms.js';
import { ChallengeBody, assertChallengeInput, challengeGone, challengeInput, recoveryMode } from '../shared/two-factor-challenge.js';
import { submit, takeIntended } from './forms.js';
import { completeSiteSignIn } from './sign-in.js';

export const CHALLENGE_PATH = '/two-factor-challenge';

export async function twoFactorChallengeRoutes(app: FastifyInstance): Promise<void> {
  const page = (request: FastifyRequest) => ({ template: 'auth/two-factor-challenge', keep: [], data: { recovery: recoveryMode(request) } });

  app.get(CHALLENGE_PATH, { config: { auth: 'guest' } }, async (request, reply) => {
    if (liveChallenge(request.session.twoFactorChallenge, 'site') === null) return challengeGone(app, request, reply, '/login');
    return reply.page('auth/two-factor-challenge', { recovery: recoveryMode(request) });
  });

  app.post(CHALLENGE_PATH, { config: { auth: 'guest', spa: true }, schema: { body: ChallengeBody }, attachValidation: true }, async (request, reply) => {
    return submit(request, reply, page(request), async () => {
      const locale = localeFor(app, request);
      assertChallengeInput(request, locale);
      const challenge = liveChallenge(request.session.twoFactorChallenge, 'site');
      if (challenge === null) return challengeGone(app, request, reply, '/login');
      const user = await passChallenge(app.services, challenge, challengeInput(request), request.ip, locale);
      if (user === null) return challengeGone(app, request, reply, '/login');
      delete request.session.twoFactorChallenge;
      await completeSiteSignIn(app, request, reply, user, { remember: challenge.remember, method: 'two-factor' });
      return done(request, reply, takeIntended(request) ?? '/dashboard');
    });
  });
}
