// The last step of every panel sign-in, whichever way it came (password, password + two-factor
// code, passkey): a new session id keeping the site's login, the admin id, the sign-in noticed
// (new-device alerts). In http/shared because the panel's login and the site's passkey routes
// both end here, and the faces import nothing from each other.
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { User } from '../../db/types.js';
import { noticeBrowserSignIn } from './new-device.js';

export type SignInMethod = 'password' | 'two-factor' | 'passkey';

/**
 * A new session id that keeps every value except `drop`. Signing in to one side must not sign the
 * other out, but must not keep a session id that someone could have planted before either.
 */
export async function regenerateKeeping(request: FastifyRequest, drop: readonly string[]): Promise<void> {
  const keep = Object.keys(request.session).filter((key) => key !== 'cookie' && !drop.includes(key));
  await request.session.regenerate(keep);
}

/** Signs the administrator in on the panel (the site's login, if any, stays). */
export async function completePanelSignIn(
  app: FastifyInstance,
  request: FastifyRequest,
  reply: FastifyReply,
  user: User,
  _options: { method: SignInMethod },
): Promise<void> {
  await regenerateKeeping(request, ['adminUserId', '_csrf']);
  request.session.adminUserId = user.id;
  request.logUser = user.id;
  noticeBrowserSignIn(app, request, reply, user, 'panel');
}
