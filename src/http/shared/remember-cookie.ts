// The remember-me cookie as a sign-in sets it (http/shared/sign-in.ts, for every way in) and the
// site's remember-me login, logout and session pages read it (http/web/remember.ts).
import type { FastifyInstance, FastifyReply } from 'fastify';
import { RememberService, selectorOf } from '../../modules/remember/remember.service.js';
import { cookieName, cookieScope } from '../../plugins/session.js';

/** The cookie's plain name; its name on the wire is rememberCookie(app) (`__Host-` in production over https). */
export const REMEMBER_COOKIE = 'tessera_remember';

export const rememberCookie = (app: FastifyInstance): string => cookieName(app.config, REMEMBER_COOKIE);

function cookieOptions(app: FastifyInstance) {
  return { ...cookieScope(app.config), httpOnly: true, sameSite: 'lax' as const };
}

/** Sets the cookie to a token's value, and notes the token in the session. */
export function setRememberCookie(app: FastifyInstance, reply: FastifyReply, value: string): void {
  void reply.setCookie(rememberCookie(app), value, { ...cookieOptions(app), maxAge: RememberService.cookieMaxAgeSeconds });
  // The session notes its device's token, so that ending the session (security page) forgets it too.
  const selector = selectorOf(value);
  if (selector !== null && reply.request.session !== undefined) reply.request.session.rememberSelector = selector;
}

export function clearRememberCookie(app: FastifyInstance, reply: FastifyReply): void {
  void reply.clearCookie(rememberCookie(app), cookieOptions(app));
}

/** Remembers this device for the user: a new token row and its cookie. */
export async function rememberDevice(app: FastifyInstance, reply: FastifyReply, userId: number): Promise<void> {
  setRememberCookie(app, reply, await app.services.remember.issue(userId));
}
