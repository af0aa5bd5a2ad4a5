// Password confirmation before sensitive actions (Laravel's password.confirm): turning two-factor
// sign-in on or off, new recovery codes, adding or removing a passkey, ending other sessions,
// changing the email, deleting the account. A confirmation lasts PASSWORD_TIMEOUT seconds
// (session.passwordConfirmedAt); after a passkey-only sign-in, a passkey confirms too
// (markPasswordConfirmed, called by the passkey routes). A form post that asked for it is held
// and sent again once confirmed (the continuation page).
import { Type } from '@sinclair/typebox';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { AppError } from '../../modules/shared/errors.js';
import type { ConfirmAction, ConfirmExtra } from '../../plugins/types.js';
import { wantsJson } from '../../plugins/web-guard.js';
import { safeBackPath, sameSitePath } from '../shared/back-path.js';
import { done, field, localeFor, schemaErrors } from '../shared/forms.js';
import { signInContext } from '../shared/sign-in.js';
import { submit } from './forms.js';
import { ConfirmPasswordContract, ConfirmedPasswordStatusContract } from './spa-contract.js';

export const CONFIRM_PASSWORD_PATH = '/user/confirm-password';
/** The page that sends a held form post again once the password is confirmed. */
export const CONTINUE_PATH = '/user/confirm-password/continue';
const CONFIRMED_STATUS_PATH = '/user/confirmed-password-status';

const ConfirmBody = Type.Object({ password: Type.String({ minLength: 1, maxLength: 4096 }) });

/** Adds another way to confirm to the confirmation page (the list is decorated in http/web/index.ts). */
export function addConfirmExtra(app: FastifyInstance, extra: ConfirmExtra): void {
  app.confirmExtras.push(extra);
}

async function confirmExtras(app: FastifyInstance, request: FastifyRequest): Promise<{ template: string; data: Record<string, unknown> }[]> {
  const shown = [];
  for (const extra of app.confirmExtras) {
    const data = await extra.load(request);
    if (data !== null) shown.push({ template: extra.template, data });
  }
  return shown;
}

/** Whether the password was confirmed within PASSWORD_TIMEOUT seconds. */
export function passwordConfirmed(app: FastifyInstance, request: FastifyRequest): boolean {
  const at = request.session.passwordConfirmedAt;
  return typeof at === 'number' && Date.now() - at < app.config.passwordTimeoutSeconds * 1000;
}

/** Records a confirmation now (the password form, or a passkey). */
export function markPasswordConfirmed(request: FastifyRequest): void {
  request.session.passwordConfirmedAt = Date.now();
}

/** How long a held form post waits for its confirmation before it is dropped. */
const HOLD_MS = 10 * 60 * 1000;
/** What a held form may carry: a few short text fields. */
const HOLD_MAX_FIELDS = 20;
const HOLD_MAX_CHARS = 4096;

/**
 * The fields of a form post worth holding in the session while its sender confirms, or null when
 * it must not be held: a field that is not text, too much of it, or a secret (a password, a
 * code, a token) that would otherwise sit in a stored session row. The CSRF token is not held:
 * the continuation page renders a fresh one, so the replayed post is checked again.
 */
function holdableFields(body: unknown): Record<string, string> | null {
  if (body === undefined || body === null) return {};
  if (typeof body !== 'object') return null;
  const entries = Object.entries(body as Record<string, unknown>).filter(([name]) => name !== '_token');
  if (entries.length > HOLD_MAX_FIELDS) return null;
  let chars = 0;
  for (const [name, value] of entries) {
    if (typeof value !== 'string' || /password|code|secret|token/i.test(name)) return null;
    chars += name.length + value.length;
  }
  return chars > HOLD_MAX_CHARS ? null : Object.fromEntries(entries as [string, string][]);
}

/**
 * A preHandler for the routes of sensitive actions: without a fresh confirmation, a browser goes
 * to the confirmation page, a script gets 423 as from Laravel. A page asked for is opened once
 * confirmed; a form post is held and sent again (the continuation page), so the action the
 * person asked for happens without a second click. Runs after the web guard, so the user is
 * signed in.
 */
export function requirePasswordConfirmed(app: FastifyInstance) {
  return async (request: FastifyRequest, reply: FastifyReply): Promise<FastifyReply | undefined> => {
    if (passwordConfirmed(app, request)) return undefined;
    // A form that fails its own schema is answered at once with its 422 (the handler's): the
    // detour is only worth taking for a form that could succeed.
    if (request.validationError !== undefined) return undefined;
    delete request.session.confirmAction;
    const back = safeBackPath(request.headers.referer, app.config.appUrl, '/security');
    if (wantsJson(request)) {
      // A script of this site (the passkey form) sends its page to the confirmation: back to it after.
      request.session.confirmIntended = back;
      throw new AppError(423, 'Password confirmation required.');
    }
    if (request.method === 'GET') {
      request.session.confirmIntended = request.url;
      return reply.redirect(CONFIRM_PASSWORD_PATH, 302);
    }
    // The page the form was on, for a post that cannot be held (or is abandoned); the post
    // itself, when it can be, for the continuation. Its path is this route's own, never input.
    request.session.confirmIntended = back;
    const fields = holdableFields(request.body);
    const path = sameSitePath(request.url);
    const userId = request.siteUser?.id ?? request.session.userId;
    if (fields !== null && path !== null && userId !== undefined) request.session.confirmAction = { userId, path, fields, at: Date.now(), shown: false };
    return reply.redirect(CONFIRM_PASSWORD_PATH, 303);
  };
}

/** The held form post of this user, if still fresh; a stale or foreign one is dropped. */
function heldAction(request: FastifyRequest): ConfirmAction | null {
  const action = request.session.confirmAction;
  if (action === undefined) return null;
  if (action.userId === request.siteUser?.id && Date.now() - action.at < HOLD_MS && sameSitePath(action.path) !== null) return action;
  delete request.session.confirmAction;
  return null;
}

/**
 * Where to go after a confirmation: the continuation of a held form post, else the page that
 * asked for it when it is a page of the site.
 */
export function takeConfirmIntended(request: FastifyRequest): string {
  if (heldAction(request)?.shown === true) return CONTINUE_PATH;
  const intended = request.session.confirmIntended;
  delete request.session.confirmIntended;
  return (typeof intended === 'string' ? sameSitePath(intended) : null) ?? '/security';
}

export async function confirmPasswordRoutes(app: FastifyInstance): Promise<void> {
  const page = { template: 'auth/confirm-password', keep: [] } as const;

  app.get(CONFIRM_PASSWORD_PATH, { config: { auth: 'user' } }, async (request, reply) => {
    // A held post belongs to the detour that brought the browser here, the first view of this
    // page after it; a later visit (the set-up's "Confirm" link, an abandoned detour) must not
    // send it after all.
    const held = heldAction(request);
    if (held?.shown === true) delete request.session.confirmAction;
    else if (held !== null) request.session.confirmAction = { ...held, shown: true };
    return reply.page(page.template, { confirmExtras: await confirmExtras(app, request) });
  });

  // Fortify's status for an SPA: whether a sensitive action would pass now, or ask first.
  app.get(CONFIRMED_STATUS_PATH, { config: { auth: 'user', spa: true }, schema: ConfirmedPasswordStatusContract }, async (request, reply) =>
    reply.header('cache-control', 'no-store').send({ confirmed: passwordConfirmed(app, request) }),
  );

  // The held form post, sent again by the browser (public/confirm-continue.js; without
  // JavaScript, one press of its button). It goes through its route as the first post did: the
  // guard, a fresh CSRF token and the confirmation are checked again there. Used once.
  app.get(CONTINUE_PATH, { config: { auth: 'user' } }, async (request, reply) => {
    if (!passwordConfirmed(app, request)) return reply.redirect(CONFIRM_PASSWORD_PATH, 302);
    const action = heldAction(request);
    delete request.session.confirmAction;
    const back = takeConfirmIntended(request);
    if (action?.shown !== true) return reply.redirect(back, 302);
    return reply.page('auth/confirm-continue', { action: { path: action.path, fields: Object.entries(action.fields) }, back });
  });

  app.post(CONFIRM_PASSWORD_PATH, { config: { auth: 'user', spa: true }, schema: { ...ConfirmPasswordContract, body: ConfirmBody }, attachValidation: true }, async (request, reply) =>
    submit(request, reply, { ...page, data: { confirmExtras: await confirmExtras(app, request) } }, async () => {
      const locale = localeFor(app, request);
      const user = await app.services.users.findById(request.siteUser!.id);
      if (user === undefined) throw new AppError(401, 'Unauthenticated.');
      await app.services.signIn.confirmPassword(user, field(request, 'password'), signInContext(app, request, 'site'), schemaErrors(request, locale));
      markPasswordConfirmed(request);
      return done(request, reply, takeConfirmIntended(request));
    }),
  );
}
