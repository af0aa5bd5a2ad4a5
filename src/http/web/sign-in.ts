// Completing a site sign-in for a way in that does not go through the pipeline's attempt yet:
// a proven user is handed to the pipeline's completion (http/shared/sign-in.ts), so the new
// session, remember-me, the audit line and the new-device alert are the same as for any method.
// A new method should rather be a file of modules/sign-in/methods/ (docs/sign-in.md).
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { User } from '../../db/types.js';
import { finishSignIn } from '../shared/sign-in.js';

/** Signs the user in on the site: a new session id, remember-me when asked, audited and noticed. */
export async function completeSiteSignIn(
  app: FastifyInstance,
  request: FastifyRequest,
  reply: FastifyReply,
  user: User,
  options: { remember: boolean; method: string },
): Promise<void> {
  await finishSignIn(app, request, reply, { status: 'signed-in', user, realm: 'site', method: options.method }, { remember: options.remember });
}
