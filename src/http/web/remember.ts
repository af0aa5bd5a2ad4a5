// The remember-me cookie: issued at a login with "remember", read by the web guard when the
// session has no user (siteUserFallbacks), rotated at each use, forgotten at logout.
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { selectorOf } from '../../modules/remember/remember.service.js';
import { clearRememberCookie as clearCookie, rememberCookie, setRememberCookie as setCookie } from '../shared/remember-cookie.js';

// Set at a sign-in by http/shared (every way in); named here too for the pages that read it.
export { REMEMBER_COOKIE, rememberDevice } from '../shared/remember-cookie.js';

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
    app.services.signIn.record({ realm: 'site', method: 'remember', outcome: found === null ? 'failed' : 'succeeded' });
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
