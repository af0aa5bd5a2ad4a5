// Password confirmation before sensitive actions (Laravel's password.confirm): turning two-factor
// sign-in on or off, new recovery codes, adding or removing a passkey, ending other sessions,
// changing the email, deleting the account. A confirmation lasts PASSWORD_TIMEOUT seconds
// (session.passwordConfirmedAt); after a passkey-only sign-in, a passkey confirms too
// (markPasswordConfirmed, called by the passkey routes).
import { Type } from '@sinclair/typebox';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { AppError } from '../../modules/shared/errors.js';
import { wantsJson } from '../../plugins/web-guard.js';
import { safeBackPath, sameSitePath } from '../shared/back-path.js';
import { done, field, localeFor, schemaErrors } from '../shared/forms.js';
import { signInContext } from '../shared/sign-in.js';
import { submit } from './forms.js';

export const CONFIRM_PASSWORD_PATH = '/user/confirm-password';
const CONFIRMED_STATUS_PATH = '/user/confirmed-password-status';

const ConfirmBody = Type.Object({ password: Type.String({ minLength: 1, maxLength: 4096 }) });

/**
 * Another way to confirm, shown under the password form (a passkey): its partial and what the
 * partial needs for this request, or null when it does not apply (a user without passkeys).
 */
import type { ConfirmExtra } from '../../plugins/types.js';

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

/**
 * A preHandler for the routes of sensitive actions: without a fresh confirmation, a browser goes
 * to the confirmation page (and comes back to the page it was on), a script gets 423 as from
 * Laravel. Runs after the web guard, so the user is signed in.
 */
export function requirePasswordConfirmed(app: FastifyInstance) {
  return async (request: FastifyRequest, reply: FastifyReply): Promise<FastifyReply | undefined> => {
    if (passwordConfirmed(app, request)) return undefined;
    // A form that fails its own schema is answered at once with its 422 (the handler's): the
    // detour is only worth taking for a form that could succeed.
    if (request.validationError !== undefined) return undefined;
    if (wantsJson(request)) throw new AppError(423, 'Password confirmation required.');
    // A form post cannot be replayed after the detour: the visitor comes back to the page the
    // form was on and sends it again.
    request.session.confirmIntended = request.method === 'GET' ? request.url : safeBackPath(request.headers.referer, app.config.appUrl, '/security');
    return reply.redirect(CONFIRM_PASSWORD_PATH, request.method === 'GET' ? 302 : 303);
  };
}

/** Where to go after a confirmation: the page that asked for it, when it is a page of the site. */
export function takeConfirmIntended(request: FastifyRequest): string {
  const intended = request.session.confirmIntended;
  delete request.session.confirmIntended;
  return (typeof intended === 'string' ? sameSitePath(intended) : null) ?? '/security';
}

export async function confirmPasswordRoutes(app: FastifyInstance): Promise<void> {
  const page = { template: 'auth/confirm-password', keep: [] } as const;

  app.get(CONFIRM_PASSWORD_PATH, { config: { auth: 'user' } }, async (request, reply) => reply.page(page.template, { confirmExtras: await confirmExtras(app, request) }));

  // Fortify's status for an SPA: whether a sensitive action would pass now, or ask first.
  app.get(CONFIRMED_STATUS_PATH, { config: { auth: 'user', spa: true } }, async (request, reply) =>
    reply.header('cache-control', 'no-store').send({ confirmed: passwordConfirmed(app, request) }),
  );

  app.post(CONFIRM_PASSWORD_PATH, { config: { auth: 'user', spa: true }, schema: { body: ConfirmBody }, attachValidation: true }, async (request, reply) =>
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
