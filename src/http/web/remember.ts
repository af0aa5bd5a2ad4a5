// The remember-me cookie: issued at a login with "remember", read by the web guard when the
// session has no user (siteUserFallbacks), rotated at each use, forgotten at logout.
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { RememberService } from '../../modules/remember/remember.service.js';

export const REMEMBER_COOKIE = 'tessera_remember';

function cookieOptions(app: FastifyInstance) {
  return { path: '/', httpOnly: true, sameSite: 'lax' as const, secure: app.config.appUrl.startsWith('https:') };
}

function setCookie(app: FastifyInstance, reply: FastifyReply, value: string): void {
  void reply.setCookie(REMEMBER_COOKIE, value, { ...cookieOptions(app), maxAge: RememberService.cookieMaxAgeSeconds });
}

function clearCookie(app: FastifyInstance, reply: FastifyReply): void {
  void reply.clearCookie(REMEMBER_COOKIE, cookieOptions(app));
}

/** Remembers this device for the user: a new token row and its cookie. */
export async function rememberDevice(app: FastifyInstance, reply: FastifyReply, userId: number): Promise<void> {
  setCookie(app, reply, await app.services.remember.issue(userId));
}

/** Forgets this device only (logout): its row and its cookie; other devices stay remembered. */
export async function forgetDevice(app: FastifyInstance, request: FastifyRequest, reply: FastifyReply): Promise<void> {
  const value = request.cookies[REMEMBER_COOKIE];
  if (value === undefined) return;
  await app.services.remember.forget(value);
  clearCookie(app, reply);
}

/** Whether this request came with a remember-me cookie (to remember the device again after a password change). */
export function hasRememberCookie(request: FastifyRequest): boolean {
  return request.cookies[REMEMBER_COOKIE] !== undefined;
}

/** Lets the web guard log a visitor in by their remember-me cookie when the session has no user. */
export function rememberLogin(app: FastifyInstance): void {
  app.siteUserFallbacks.push(async (request, reply) => {
    const value = request.cookies[REMEMBER_COOKIE];
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
