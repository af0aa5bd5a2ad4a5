// Email changes with a link: the form on the security page (POST /user/email, password
// confirmed) starts a pending change; the link mailed to the new address opens a page whose
// button makes it (POST), the link mailed to the old address opens one whose button cancels it.
//
// Where the form lives: on the security page's "Email address" section, beside the current and
// the pending address and its cancel button, because changing the address is a sensitive action
// that asks for the password like the others there. The profile page shows the address with a
// link to that section, and its form keeps only the name (immediate); POST /profile still takes
// an `email` field (older forms, scripts): a different address goes through the same pending
// change and the same password confirmation.
//
// The links only open pages: a mail scanner that fetches every link in a message changes
// nothing. They need no sign-in (the new mailbox may be read on another device), and they
// work once, within EMAIL_CHANGE_MINUTES.
import { Type } from '@sinclair/typebox';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { User } from '../../db/types.js';
import { formatDateTime } from '../../modules/i18n/formats.js';
import { t } from '../../modules/i18n/translator.js';
import { AppError } from '../../modules/shared/errors.js';
import { wantsJson } from '../../plugins/web-guard.js';
import { assertValid, done, field, localeFor } from '../shared/forms.js';
import { requirePasswordConfirmed } from './confirm-password.js';
import { submit } from './forms.js';
import { addSecuritySection, currentUser, securityPageData } from './security.js';

const EmailBody = Type.Object({ email: Type.String({ format: 'email', minLength: 1, maxLength: 255 }) });

type LinkParams = { id: string; token: string };

/**
 * Starts a pending change of the user's address to `email` (the password was confirmed) and
 * answers with the notice; the caller has checked the form.
 */
export async function startEmailChange(app: FastifyInstance, request: FastifyRequest, reply: FastifyReply, user: User, email: string, back: string): Promise<FastifyReply> {
  const locale = localeFor(app, request);
  // The account's one owner of profile changes: the address is only ever a pending change.
  const { emailChangeStarted } = await app.services.auth.updateProfile(user, { email }, locale, 'password-confirmed');
  return done(request, reply, back, t(locale, emailChangeStarted ? 'email_change.sent' : 'email_change.same', { email }));
}

export async function emailChangeRoutes(app: FastifyInstance): Promise<void> {
  addSecuritySection(app, {
    order: 40,
    template: '/security/email',
    load: async (request, user) => {
      const pending = await app.services.emailChanges.pending(user.id);
      const locale = localeFor(app, request);
      const expires = pending === null ? null : formatDateTime(locale, pending.expiresAt);
      return { emailChange: { current: user.email, pending: pending === null ? null : { email: pending.newEmail, expires } } };
    },
  });

  // The security page again, with this form's errors (the sections load as for GET /security).
  const securityPage = async (request: FastifyRequest, user: User) => ({ template: 'security/index', keep: ['email'], data: await securityPageData(app, request, user, true) });

  // The form is checked before the password is asked for: a refused form says why at once, and
  // only an address worth mailing makes the detour to the confirmation page.
  app.post('/user/email', { config: { auth: 'verified' }, schema: { body: EmailBody }, attachValidation: true }, async (request, reply) => {
    const user = await currentUser(app, request);
    return submit(request, reply, await securityPage(request, user), async () => {
      assertValid(request, localeFor(app, request));
      await requirePasswordConfirmed(app)(request, reply);
      if (reply.sent) return reply;
      return startEmailChange(app, request, reply, user, field(request, 'email'), '/security');
    });
  });

  // Withdrawing one's own pending change needs no confirmation: it only undoes.
  app.post('/user/email/cancel', { config: { auth: 'verified' } }, async (request, reply) => {
    const user = await currentUser(app, request);
    await app.services.emailChanges.withdraw(user.id);
    return done(request, reply, '/security', t(localeFor(app, request), 'email_change.withdrawn'));
  });

  // A dead link: its page says why (a script gets the error envelope).
  const linkPage = (reply: FastifyReply, kind: 'confirm' | 'cancel', state: 'invalid' | 'expired', locale: string) => {
    const status = state === 'expired' ? 410 : 404;
    if (wantsJson(reply.request)) throw new AppError(status, t(locale, `email_change.${state}`));
    return reply.page(`email-change/${kind}`, { link: null, message: t(locale, `email_change.${state}`) }, status);
  };

  for (const kind of ['confirm', 'cancel'] as const) {
    const path = kind === 'confirm' ? '/email/change/:id/:token' : '/email/change/:id/cancel/:token';
    app.get<{ Params: LinkParams }>(path, { config: { auth: 'public' } }, async (request, reply) => {
      // The token is in the path: no referrer carries it to another site.
      void reply.header('referrer-policy', 'no-referrer');
      const state = await app.services.emailChanges.check(Number(request.params.id), request.params.token, kind);
      if (state.state !== 'valid') return linkPage(reply, kind, state.state, localeFor(app, request));
      return reply.page(`email-change/${kind}`, { link: { action: request.url.split('?')[0], email: state.change.newEmail }, message: null });
    });
  }

  app.post<{ Params: LinkParams }>('/email/change/:id/:token', { config: { auth: 'public' } }, async (request, reply) => {
    const locale = localeFor(app, request);
    const { id, token } = request.params;
    const check = await app.services.emailChanges.check(Number(id), token, 'confirm');
    if (check.state !== 'valid') return linkPage(reply, 'confirm', check.state, locale);
    const page = { template: 'email-change/confirm', keep: [], data: { link: null, message: null } };
    return submit(request, reply, page, async () => {
      const result = await app.services.emailChanges.confirm(Number(id), token);
      if (result.state !== 'done') return linkPage(reply, 'confirm', result.state, locale);
      const message = t(locale, 'email_change.confirmed', { email: check.change.newEmail });
      return done(request, reply, request.siteUser?.id === result.userId ? '/security' : '/login', message);
    });
  });

  app.post<{ Params: LinkParams }>('/email/change/:id/cancel/:token', { config: { auth: 'public' } }, async (request, reply) => {
    const locale = localeFor(app, request);
    const state = await app.services.emailChanges.cancel(Number(request.params.id), request.params.token);
    if (state !== 'valid') return linkPage(reply, 'cancel', state, locale);
    return done(request, reply, request.siteUser === null ? '/login' : '/security', t(locale, 'email_change.cancelled'));
  });
}
