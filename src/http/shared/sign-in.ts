// The HTTP side of every sign-in, one function per realm, whatever the method (password,
// passkey, the two-factor step, a provider): the pipeline (modules/sign-in) proved who it is;
// here the site gets a new session id, remember-me and the page first asked for, the panel a new
// session id keeping the site's login, the API its token; each then lets the pipeline write the
// audit line and notice the device. In http/shared because the site's pages, the panel and the
// API all end here, and the faces import nothing from each other.
import { normalizeIP } from '@fastify/rate-limit';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { Realm, SignInContext, SignInOutcome, SignedIn } from '../../modules/sign-in/sign-in.service.js';
import { wantsJson } from '../../plugins/web-guard.js';
import { sameSitePath } from './back-path.js';
import { done, localeFor } from './forms.js';
import { browserNotice, tokenNotice } from './new-device.js';
import { rememberDevice } from './remember-cookie.js';
import { startChallenge } from './two-factor-challenge.js';

/** Where each realm asks for the code. */
export const CHALLENGE_PATHS = { site: '/two-factor-challenge', panel: '/admin/two-factor-challenge' } as const;

/**
 * What the pipeline knows of a request: the realm, the client's address and the one its attempts
 * count by (an IPv6 client by its /64, as the API's request limits), the refusals' language (the
 * visitor's on pages, English on the API).
 */
export function signInContext(app: FastifyInstance, request: FastifyRequest, realm: Realm): SignInContext {
  return { realm, ip: request.ip, client: normalizeIP(request.ip), locale: realm === 'api' ? 'en' : localeFor(app, request) };
}

/**
 * A new session id that keeps every value except `drop`. Signing in to one side must not sign the
 * other out, but must not keep a session id that someone could have planted before either.
 */
export async function regenerateKeeping(request: FastifyRequest, drop: readonly string[]): Promise<void> {
  const keep = Object.keys(request.session).filter((key) => key !== 'cookie' && !drop.includes(key));
  await request.session.regenerate(keep);
}

/** The page first asked for before the site's login, if it is a local page of the site. */
export function takeIntended(request: FastifyRequest): string | null {
  const intended = request.session.intended;
  delete request.session.intended;
  // Only a path of this site (sameSitePath), and the panel has its own login.
  if (typeof intended !== 'string' || sameSitePath(intended) === null) return null;
  if (intended === '/admin' || intended.startsWith('/admin/')) return null;
  return intended;
}

/** Where to go after signing in to the panel: the panel page first asked for, else the dashboard. */
function takeIntendedPanelPage(request: FastifyRequest): string {
  const intended = request.session.intended;
  if (typeof intended === 'string' && /^\/admin(\/|\?|$)/.test(intended) && !intended.startsWith('/admin/login')) {
    delete request.session.intended;
    return intended;
  }
  return '/admin';
}

/** Where a browser sign-in step leads: signed in (the next page), or to the code step. */
export type Finished = { signedIn: boolean; location: string };

/**
 * Ends a site or panel sign-in step, whatever the method: the code step when it is due (only a
 * pending challenge in a new session), else the sign-in completed in its realm.
 */
export async function finishSignIn(app: FastifyInstance, request: FastifyRequest, reply: FastifyReply, outcome: SignInOutcome, options: { remember?: boolean } = {}): Promise<Finished> {
  const remember = options.remember ?? false;
  if (outcome.status === 'second-factor') {
    await startChallenge(request, outcome.user, outcome.realm, remember, outcome.method);
    return { signedIn: false, location: CHALLENGE_PATHS[outcome.realm] };
  }
  if (outcome.realm === 'site') return completeSite(app, request, reply, { ...outcome, realm: 'site' }, remember);
  if (outcome.realm === 'panel') return completePanel(app, request, reply, { ...outcome, realm: 'panel' });
  throw new Error('An API sign-in completes with issueApiToken.');
}

/** The site: a new session id (a planted one is worth nothing after it), remember-me when asked. */
async function completeSite(app: FastifyInstance, request: FastifyRequest, reply: FastifyReply, signedIn: SignedIn & { realm: 'site' }, remember: boolean): Promise<Finished> {
  await app.loginSite(request, signedIn.user);
  if (remember) await rememberDevice(app, reply, signedIn.user.id);
  await app.services.signIn.completeBrowser(signedIn, browserNotice(app, request, reply));
  return { signedIn: true, location: takeIntended(request) ?? '/dashboard' };
}

/** The panel: a new session id keeping the site's login, the administrator's id; never remember-me. */
async function completePanel(app: FastifyInstance, request: FastifyRequest, reply: FastifyReply, signedIn: SignedIn & { realm: 'panel' }): Promise<Finished> {
  const location = takeIntendedPanelPage(request);
  await regenerateKeeping(request, ['adminUserId', '_csrf']);
  request.session.adminUserId = signedIn.user.id;
  request.logUser = signedIn.user.id;
  await app.services.signIn.completeBrowser(signedIn, browserNotice(app, request, reply));
  return { signedIn: true, location };
}

/** The answer to a form (303 to the next page or the code step) or to an SPA (204, or Fortify's {"two_factor": true}). */
export function answerSignIn(request: FastifyRequest, reply: FastifyReply, finished: Finished): FastifyReply {
  if (finished.signedIn) return done(request, reply, finished.location);
  if (wantsJson(request)) return reply.code(200).header('cache-control', 'no-store').send({ two_factor: true });
  return reply.redirect(finished.location, 303);
}

/** Completes an API sign-in: a new token for `deviceName` (its secret in the answer, once), with its own expiry when given. */
export async function issueApiToken(app: FastifyInstance, request: FastifyRequest, outcome: SignInOutcome, deviceName: string, expiresAt: Date | null = null): Promise<{ plaintext: string }> {
  if (outcome.status !== 'signed-in' || outcome.realm !== 'api') throw new Error('Only a completed API sign-in gets a token.');
  request.logUser = outcome.user.id;
  return app.services.signIn.issueToken({ ...outcome, realm: 'api' }, deviceName, tokenNotice(app, request, deviceName), expiresAt);
}
