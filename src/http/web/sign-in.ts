// The last step of every sign-in, whichever way it came (password, password + two-factor code,
// passkey): the new session, remember-me, and the sign-in noticed (new-device alerts). The site
// and the panel each have one such step, so no way in can skip part of it.
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { User } from '../../db/types.js';
import { noticeBrowserSignIn } from '../shared/new-device.js';
import { rememberDevice } from './remember.js';

export type SignInMethod = 'password' | 'two-factor' | 'passkey';

/** Signs the user in on the site: a new session id, remember-me when asked. */
export async function completeSiteSignIn(
  app: FastifyInstance,
  request: FastifyRequest,
  reply: FastifyReply,
  user: User,
  options: { remember: boolean; method: SignInMethod },
): Promise<void> {
  await app.loginSite(request, user);
  if (options.remember) await rememberDevice(app, reply, user.id);
  noticeBrowserSignIn(app, request, reply, user, 'site');
}

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
