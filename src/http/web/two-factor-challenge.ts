// GET/POST /two-factor-challenge: the code step of the site's sign-in when two-factor is on
// (Fortify's two-factor-challenge). POST /login leaves only a pending challenge in the session
// (startChallenge in src/http/shared/two-factor-challenge.ts); this step checks the code or a
// recovery code, and the sign-in pipeline completes it. The panel's own step is in src/http/admin/login.ts.
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { liveChallenge } from '../../modules/auth/two-factor-challenge.js';
import { localeFor } from '../shared/forms.js';
import { CHALLENGE_PATHS, answerSignIn, finishSignIn, signInContext } from '../shared/sign-in.js';
import { ChallengeBody, assertChallengeInput, challengeGone, challengeInput, recoveryMode } from '../shared/two-factor-challenge.js';
import { submit } from './forms.js';
import { TwoFactorChallengeContract } from './spa-contract.js';

const CHALLENGE_PATH = CHALLENGE_PATHS.site;

export async function twoFactorChallengeRoutes(app: FastifyInstance): Promise<void> {
  const page = (request: FastifyRequest) => ({ template: 'auth/two-factor-challenge', keep: [], data: { recovery: recoveryMode(request) } });

  app.get(CHALLENGE_PATH, { config: { auth: 'guest' } }, async (request, reply) => {
    if (liveChallenge(request.session.twoFactorChallenge, 'site') === null) return challengeGone(app, request, reply, '/login');
    return reply.page('auth/two-factor-challenge', { recovery: recoveryMode(request) });
  });

  app.post(CHALLENGE_PATH, { config: { auth: 'guest', spa: true }, schema: { ...TwoFactorChallengeContract, body: ChallengeBody }, attachValidation: true }, async (request, reply) => {
    return submit(request, reply, page(request), async () => {
      const locale = localeFor(app, request);
      assertChallengeInput(request, locale);
      const challenge = liveChallenge(request.session.twoFactorChallenge, 'site');
      if (challenge === null) return challengeGone(app, request, reply, '/login');
      const signedIn = await app.services.signIn.secondFactor(challenge, challengeInput(request), signInContext(app, request, 'site'));
      if (signedIn === null) return challengeGone(app, request, reply, '/login');
      delete request.session.twoFactorChallenge;
      return answerSignIn(request, reply, await finishSignIn(app, request, reply, signedIn, { remember: challenge.remember }));
    });
  });
}
