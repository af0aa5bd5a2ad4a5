// POST /logout: ends the site login on this browser only. The session row is deleted server-side
// (a copied session cookie is worth nothing after it); a panel login in the same browser stays,
// under a new session id; this device's remember-me token goes, other devices keep theirs.
import type { FastifyInstance } from 'fastify';
import { SESSION_COOKIE, cookieName, cookieScope } from '../../plugins/session.js';
import { done } from '../shared/forms.js';
import { forgetDevice } from './remember.js';
import { LogoutContract } from './spa-contract.js';

export async function logoutRoutes(app: FastifyInstance): Promise<void> {
  app.post('/logout', { config: { auth: 'user', spa: true }, schema: LogoutContract }, async (request, reply) => {
    await forgetDevice(app, request, reply);
    if (typeof request.session.adminUserId === 'number') {
      delete request.session.userId;
      await request.session.regenerate(['adminUserId']);
    } else {
      await request.session.destroy();
      void reply.clearCookie(cookieName(app.config, SESSION_COOKIE), cookieScope(app.config));
    }
    return done(request, reply, '/');
  });
}
