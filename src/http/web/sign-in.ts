// The last step of every site sign-in, whichever way it came (password, password + two-factor
// code, passkey): the new session, remember-me, and the sign-in noticed (new-device alerts). The
// panel's one step is in http/shared/panel-sign-in.ts (the panel's face and the passkey routes
// share it), so no way in can skip part of either.
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { User } from '../../db/types.js';
import { noticeBrowserSignIn } from '../shared/new-device.js';
import { rememberDevice } from './remember.js';

import type { SignInMethod } from '../shared/panel-sign-in.js';

export type { SignInMethod } from '../shared/panel-sign-in.js';

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
