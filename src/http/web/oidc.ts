// Sign-in with OpenID Connect providers (OIDC_PROVIDERS, docs/oidc.md). GET /auth/{name}/redirect
// sends the browser to the provider; GET /auth/{name}/callback (the redirect URI registered there)
// comes back with a code. One pending authorization at a time lives in the session, with what it
// was for: signing in (or up), linking the provider to the signed-in account (/security), or
// confirming the signed-in person (the password confirmation, for accounts without one). Also
// /security's "Connected accounts" and /profile's "Set a password" for an account without one.
// The protocol is modules/oidc's (openid-client); accounts and links are modules/identities'.
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { t } from '../../modules/i18n/translator.js';
import { LastWayInError, type ProviderClaims } from '../../modules/identities/identities.service.js';
import { OidcError, OidcService, type OidcFailure } from '../../modules/oidc/oidc.service.js';
import { AppError } from '../../modules/shared/errors.js';
import { ProviderRefusal } from '../../modules/sign-in/methods/oidc.js';
import type { SignInOutcome } from '../../modules/sign-in/sign-in.service.js';
import { flash } from '../../plugins/views.js';
import { sessionStarted } from '../../plugins/session.js';
import { userOfRequest, wantsJson } from '../../plugins/web-guard.js';
import { done, field, localeFor } from '../shared/forms.js';
import { finishSignIn, signInContext } from '../shared/sign-in.js';
import { addConfirmExtra, CONFIRM_PASSWORD_PATH, markPasswordConfirmed, requirePasswordConfirmed, takeConfirmIntended } from './confirm-password.js';
import type { OidcIntent } from '../../plugins/types.js';
import { submit } from './forms.js';
import { addSecuritySection } from './security.js';

/** How long the provider may take to send the person back. */
const PENDING_MS = 10 * 60_000;

/**
 * The providers' buttons on /login and /register: their templates read `oidcProviders`. Called by
 * http/web/index.ts before those routes are registered (reply.locals reaches every view they render).
 */
export function oidcPageLocals(app: FastifyInstance): void {
  const buttons = app.config.oidcProviders.map(({ name, label }) => ({ name, label }));
  const locals = (reply: FastifyReply, values: Record<string, unknown>) => ((reply as FastifyReply & { locals: Record<string, unknown> | null }).locals = values);
  if (buttons.length > 0) {
    app.addHook('onRequest', async (request, reply) => {
      const path = request.url.split('?')[0];
      if (path === '/login' || path === '/register') locals(reply, { oidcProviders: buttons });
    });
  }
  // /profile offers "Set a password" instead of "Update password" to an account without one, and
  // the password confirmation shows it no password form (the session's user; the route's own
  // guard still decides whether the page is shown at all).
  app.addHook('preHandler', async (request, reply) => {
    // The address first: on any other page reading the session would start one for a guest.
    if (!/^\/(profile|user\/confirm-password)(\/|\?|$)/.test(request.url) || !sessionStarted(request)) return;
    const id = request.session.userId;
    if (typeof id !== 'number') return;
    const user = await userOfRequest(app, request, id);
    if (user !== undefined) locals(reply, { hasPassword: user.password !== null });
  });
}

/**
 * A page of a listed first-party SPA origin (an absolute http(s) URL whose host[:port] is in
 * SANCTUM_STATEFUL_DOMAINS), else null: never an open redirect.
 */
export function spaReturnTo(raw: unknown, statefulDomains: readonly string[]): string | null {
  if (typeof raw !== 'string' || raw === '' || raw.length > 2048) return null;
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return null;
  }
  if ((url.protocol !== 'https:' && url.protocol !== 'http:') || url.username !== '' || url.password !== '') return null;
  return statefulDomains.includes(url.host.toLowerCase()) ? url.href : null;
}

const FAILURE_KEYS: Record<OidcFailure, string> = {
  unreachable: 'oidc.failed.unreachable',
  denied: 'oidc.failed.denied',
  state: 'oidc.failed.state',
  rejected: 'oidc.failed.rejected',
  'no-email': 'oidc.failed.no_email',
};

export async function oidcRoutes(app: FastifyInstance): Promise<void> {
  const oidc = new OidcService(app.config.oidcProviders, app.config.appUrl, app.log, app.config.env !== 'production');
  const identities = app.services.identities;

  // "Set a password" on /profile, for an account made through a provider: a new way in, so the
  // person is confirmed first (by the provider or a passkey: there is no password to ask for).
  app.post('/profile/set-password', { config: { auth: 'verified' }, preHandler: requirePasswordConfirmed(app) }, async (request, reply) =>
    submit(request, reply, { template: 'profile', keep: [], data: { profile: { name: request.siteUser!.name, email: request.siteUser!.email }, hasPassword: false } }, async () => {
      const locale = localeFor(app, request);
      const set = await app.services.auth.setFirstPassword(request.siteUser!, field(request, 'password'), field(request, 'password_confirmation'), locale);
      return done(request, reply, '/profile', t(locale, set ? 'oidc.password.set' : 'oidc.password.already'));
    }),
  );

  if (app.config.oidcProviders.length === 0) return;
  // Discovery at start, not awaited: a provider that is down is logged and tried again later.
  app.addHook('onReady', async () => void oidc.warm());

  const labelOf = (name: string) => oidc.provider(name)?.label ?? name;
  const providerOr404 = (name: string) => {
    if (oidc.provider(name) === undefined) throw new AppError(404, 'Not Found');
    return name;
  };

  /** A failure: logged with its reason (never a token or code), one message, nothing created. */
  const fail = (request: FastifyRequest, reply: FastifyReply, provider: string, error: OidcError, to = '/login'): FastifyReply => {
    request.log.warn({ provider, reason: error.reason, detail: error.detail }, 'OIDC sign-in failed');
    flash(request, { status: t(localeFor(app, request), FAILURE_KEYS[error.reason], { provider: labelOf(provider) }) });
    return reply.redirect(to, 303);
  };

  /** Sends the browser to the provider, with the authorization pending in its session. */
  const begin = async (request: FastifyRequest, reply: FastifyReply, name: string, intent: OidcIntent, returnTo: string | null): Promise<FastifyReply> => {
    try {
      const { url, pending } = await oidc.start(name, { fresh: intent === 'confirm' });
      request.session.oidc = { ...pending, intent, userId: request.siteUser?.id ?? null, returnTo, startedAt: Date.now() };
      return reply.redirect(url, 303);
    } catch (error) {
      if (!(error instanceof OidcError)) throw error;
      return fail(request, reply, name, error, intent === 'login' ? '/login' : intent === 'link' ? '/security' : CONFIRM_PASSWORD_PATH);
    }
  };

  app.get<{ Params: { name: string }; Querystring: { return_to?: string } }>('/auth/:name/redirect', { config: { auth: 'guest' } }, async (request, reply) =>
    begin(request, reply, providerOr404(request.params.name), 'login', spaReturnTo(request.query.return_to, app.config.statefulDomains)),
  );

  // Linking and confirming start from a form of the signed-in user's (CSRF-checked): a page of
  // another site cannot start them.
  app.post<{ Params: { name: string } }>('/auth/:name/link', { config: { auth: 'verified' }, preHandler: requirePasswordConfirmed(app) }, async (request, reply) =>
    begin(request, reply, providerOr404(request.params.name), 'link', null),
  );
  app.post<{ Params: { name: string } }>('/auth/:name/confirm', { config: { auth: 'user' } }, async (request, reply) =>
    begin(request, reply, providerOr404(request.params.name), 'confirm', null),
  );

  app.get<{ Params: { name: string } }>('/auth/:name/callback', { config: { auth: 'public' } }, async (request, reply) => {
    const name = providerOr404(request.params.name);
    // Used once, whatever happens next: the same state can never be answered twice.
    const pending = request.session.oidc;
    delete request.session.oidc;
    const query = new URLSearchParams(request.url.split('?')[1] ?? '');
    const stale = pending === undefined || pending.provider !== name || Date.now() - pending.startedAt > PENDING_MS || query.get('state') !== pending.state;
    // A link or a confirmation belongs to the user who started it, still signed in.
    const wrongUser = pending !== undefined && pending.intent !== 'login' && (request.siteUser === null || request.siteUser.id !== pending.userId);
    if (stale || wrongUser) return fail(request, reply, name, new OidcError('state', stale ? 'no matching pending authorization' : 'signed-in user changed'));
    const back = pending.intent === 'login' ? '/login' : pending.intent === 'link' ? '/security' : CONFIRM_PASSWORD_PATH;
    let claims: ProviderClaims;
    try {
      claims = await oidc.finish(pending, query);
    } catch (error) {
      if (!(error instanceof OidcError)) throw error;
      return fail(request, reply, name, error, back);
    }
    if (pending.intent === 'link') return finishLink(request, reply, pending.userId!, claims);
    if (pending.intent === 'confirm') return finishConfirm(request, reply, pending.userId!, claims);
    return finishLogin(request, reply, claims, pending.returnTo);
  });

  /** Connects the provider's subject to the signed-in account, unless another account has it. */
  const finishLink = async (request: FastifyRequest, reply: FastifyReply, userId: number, claims: ProviderClaims): Promise<FastifyReply> => {
    const linked = await identities.link(userId, claims);
    request.log.info({ provider: claims.provider, result: linked }, 'OIDC link');
    return done(request, reply, '/security', t(localeFor(app, request), `oidc.link.${linked.replaceAll('-', '_')}`, { provider: labelOf(claims.provider) }));
  };

  /** Records the confirmation when the provider's subject is the signed-in account's own. */
  const finishConfirm = async (request: FastifyRequest, reply: FastifyReply, userId: number, claims: ProviderClaims): Promise<FastifyReply> => {
    if (!(await identities.belongsTo(userId, claims))) {
      request.log.warn({ provider: claims.provider }, 'OIDC confirmation by another account of the provider');
      return done(request, reply, CONFIRM_PASSWORD_PATH, t(localeFor(app, request), 'oidc.confirm.other_account', { provider: labelOf(claims.provider) }));
    }
    markPasswordConfirmed(request);
    return done(request, reply, takeConfirmIntended(request));
  };

  /**
   * Signs in through the pipeline (modules/sign-in, the `oidc` method): the account found or made,
   * then the code step when two-factor is on, else the site's new session, the audit line and the
   * device noticed. An email another account has is never linked (its owner links from /security).
   */
  const finishLogin = async (request: FastifyRequest, reply: FastifyReply, claims: ProviderClaims, returnTo: string | null): Promise<FastifyReply> => {
    const { signIn } = app.services;
    let outcome: SignInOutcome;
    try {
      outcome = await signIn.attempt(signIn.methods.oidc, { claims }, signInContext(app, request, 'site'));
    } catch (error) {
      if (!(error instanceof ProviderRefusal)) throw error;
      if (error.reason !== 'email-taken') return fail(request, reply, claims.provider, new OidcError(error.reason === 'no-email' ? 'no-email' : 'rejected', error.reason));
      request.log.info({ provider: claims.provider }, 'OIDC sign-in met an existing account by email; not linked');
      return done(request, reply, '/login', t(localeFor(app, request), 'oidc.email_taken', { provider: labelOf(claims.provider) }));
    }
    request.log.info({ provider: claims.provider, userId: outcome.user.id, status: outcome.status }, 'OIDC sign-in');
    const finished = await finishSignIn(app, request, reply, outcome);
    // A first-party SPA's page, once signed in (the code step keeps the site's own way).
    if (finished.signedIn && returnTo !== null) return reply.redirect(returnTo, 303);
    return reply.redirect(finished.location, 303);
  };

  // /security: the providers, linked or not, with Connect and Disconnect.
  addSecuritySection(app, {
    order: 25,
    template: '/security/connected-accounts',
    load: async (_request, user) => {
      const linked = await identities.listFor(user.id);
      const rows = [];
      for (const { name, label } of oidc.list()) {
        const identity = linked.find((each) => each.provider === name);
        rows.push({ name, label, email: identity?.email ?? null, linked: identity !== undefined, last: identity !== undefined && (await identities.isLastWayIn(user.id, name)) });
      }
      return { connectedAccounts: rows };
    },
  });

  app.post<{ Params: { name: string } }>('/auth/:name/unlink', { config: { auth: 'verified' }, preHandler: requirePasswordConfirmed(app) }, async (request, reply) => {
    const name = providerOr404(request.params.name);
    const locale = localeFor(app, request);
    try {
      const removed = await identities.unlink(request.siteUser!.id, name);
      return done(request, reply, '/security', t(locale, removed ? 'oidc.unlink.done' : 'oidc.unlink.none', { provider: labelOf(name) }));
    } catch (error) {
      if (!(error instanceof LastWayInError)) throw error;
      if (wantsJson(request)) throw new AppError(409, t(locale, 'oidc.unlink.last', { provider: labelOf(name) }));
      return done(request, reply, '/security', t(locale, 'oidc.unlink.last', { provider: labelOf(name) }));
    }
  });

  // On the password confirmation page: the providers linked to the signed-in account.
  addConfirmExtra(app, {
    template: '/auth/oidc-confirm',
    load: async (request) => {
      const linked = new Set((await identities.listFor(request.siteUser!.id)).map((identity) => identity.provider));
      const providers = oidc.list().filter((provider) => linked.has(provider.name));
      return providers.length === 0 ? null : { confirmProviders: providers };
    },
  });
}
