// The remember-me cookie: issued at a login with "remember", read by the web guard when the
// session has no user (siteUserFallbacks), rotated at each use, forgotten at logout.
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { RememberService, selectorOf } from '../../modules/remember/remember.service.js';
import { cookieName, cookieScope } from '../../plugins/session.js';

/** The cookie's plain name; its name on the wire is rememberCookie(app) (`__Host-` in production over https). */
export const REMEMBER_COOKIE = 'tessera_remember';

const rememberCookie = (app: FastifyInstance): string => cookieName(app.config, REMEMBER_COOKIE);

function cookieOptions(app: FastifyInstance) {
  return { ...cookieScope(app.config), httpOnly: true, sameSite: 'lax' as const };
}

function setCookie(app: FastifyInstance, reply: FastifyReply, value: string): void {
  void reply.setCookie(rememberCookie(app), value, { ...cookieOptions(app), maxAge: RememberService.cookieMaxAgeSeconds });
  // The session notes its device's token, so that ending the session (security page) forgets it too.
  const selector = selectorOf(value);
  if (selector !== null && reply.request.session !== undefined) reply.request.session.rememberSelector = selector;
}

function clearCookie(app: FastifyInstance, reply: FastifyReply): void {
  void reply.clearCookie(rememberCookie(app), cookieOptions(app));
}

/** Remembers this device for the user: a new token row and its cookie. */
export async function rememberDevice(app: FastifyInstance, reply: FastifyReply, userId: number): Promise<void> {
  setCookie(app, reply, await app.services.remember.issue(userId));
}

/** Forgets this device only (logout): its row and its cookie; other devices stay remembered. */
export async function forgetDevice(app: FastifyInstance, request: FastifyRequest, reply: FastifyReply): Promise<void> {
  const value = request.cookies[rememberCookie(app)];
  if (value === undefined) return;
  await app.services.remember.forget(value);
  clearCookie(app, reply);
}

/** Whether this request came with a remember-me cookie (to remember the device again after a password change). */
export function hasRememberCookie(request: FastifyRequest): boolean {
  return request.cookies[rememberCookie(request.server)] !== undefined;
}

/** The selector of this request's remember-me cookie (the device's token), or null. */
export function rememberSelectorOf(request: FastifyRequest): string | null {
  const value = request.cookies[rememberCookie(request.server)];
  return value === undefined ? null : selectorOf(value);
}

/** Lets the web guard log a visitor in by their remember-me cookie when the session has no user. */
export function rememberLogin(app: FastifyInstance): void {
  app.siteUserFallbacks.push(async (request, reply) => {
    const value = request.cookies[rememberCookie(app)];
    if (value === undefined) return null;
    const found = await app.services.remember.consume(value);
    if (found === null) {
      clearCookie(app, reply);
      return null;
    }
    // A new session id, as at any login; the cookie's validator is replaced in the same step.
    await app.loginSite(request, found.user);
    setCookie(app, reply, found.cookie);
    return found.user;
  });
}
