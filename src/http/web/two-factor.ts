// Two-factor sign-in on the security page, as Jetstream has it: Enable → a QR code and the key
// as text → one correct code turns it on and shows 8 recovery codes once (with a text-file
// download that works only then) → new codes or Disable. Every change asks for a fresh password
// confirmation (requirePasswordConfirmed). The sign-in step that asks for the code is login.ts's.
import { Type } from '@sinclair/typebox';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { User } from '../../db/types.js';
import { formatDate } from '../../modules/i18n/formats.js';
import { t } from '../../modules/i18n/translator.js';
import { invalid } from '../../modules/shared/errors.js';
import { groupedSecret, recoveryCodesFileName, recoveryCodesText, twoFactorEnabled } from '../../modules/two-factor/two-factor.service.js';
import { wantsJson } from '../../plugins/web-guard.js';
import { done, field, localeFor, schemaErrors } from '../shared/forms.js';
import { CONFIRM_PASSWORD_PATH, passwordConfirmed, requirePasswordConfirmed } from './confirm-password.js';
import { submit } from './forms.js';
import { addSecuritySection, currentUser, securityPageData } from './security.js';

const SECURITY = '/security';
const BASE = '/user/two-factor';
export const RECOVERY_CODES_FILE = `${BASE}/recovery-codes.txt`;
/** How long after they were made the new recovery codes can still be downloaded. */
const DOWNLOAD_MS = 15 * 60 * 1000;

const ConfirmBody = Type.Object({ code: Type.String({ minLength: 1, maxLength: 64 }) });

/** The fresh codes of this user still in the session, or null (expired, another user, altered). */
function freshCodes(app: FastifyInstance, request: FastifyRequest, userId: number): { codes: string[]; shown: boolean } | null {
  const kept = request.session.twoFactorCodes;
  if (kept === undefined) return null;
  const codes = kept.userId === userId && Date.now() - kept.at < DOWNLOAD_MS ? app.services.twoFactor.openRecoveryCodes(kept.sealed) : null;
  if (codes === null) {
    delete request.session.twoFactorCodes;
    return null;
  }
  return { codes, shown: kept.shown };
}

export async function twoFactorRoutes(app: FastifyInstance): Promise<void> {
  const service = app.services.twoFactor;

  addSecuritySection(app, {
    order: 10,
    template: '/security/two-factor',
    async load(request, user) {
      const locale = localeFor(app, request);
      // New codes are shown on one page view; after that only the download is left, until the next view.
      const fresh = freshCodes(app, request, user.id);
      if (fresh !== null && fresh.shown) delete request.session.twoFactorCodes;
      if (fresh !== null && !fresh.shown) request.session.twoFactorCodes = { ...request.session.twoFactorCodes!, shown: true };
      const enabled = twoFactorEnabled(user);
      const setup = enabled ? null : await service.pendingSetup(user);
      // The key of a set-up under way guards the account once confirmed: only a session that
      // confirmed the password recently sees it (Fortify's password.confirm on the QR code and
      // the key). Any other session of the account sees that a set-up is under way and a link
      // to confirm, so a borrowed session cannot copy the key the owner is about to scan.
      const shown = setup !== null && passwordConfirmed(app, request) ? setup : null;
      const since = user.two_factor_confirmed_at === null ? '' : formatDate(locale, { dateStyle: 'long' }, user.two_factor_confirmed_at);
      return {
        twoFactor: {
          state: enabled ? 'on' : setup === null ? 'off' : 'pending',
          locked: setup !== null && shown === null,
          confirmUrl: CONFIRM_PASSWORD_PATH,
          qrSvg: shown?.qrSvg ?? null,
          secret: shown === null ? null : groupedSecret(shown.secret),
          since,
          remaining: service.remainingRecoveryCodes(user),
          recoveryCodes: fresh !== null && !fresh.shown ? fresh.codes : null,
          download: RECOVERY_CODES_FILE,
        },
      };
    },
  });

  /** Puts new recovery codes in the session for the security page (or answers them to a script). */
  const handOver = (request: FastifyRequest, reply: FastifyReply, user: User, codes: string[], status: string): FastifyReply => {
    if (wantsJson(request)) return reply.header('cache-control', 'no-store').send({ recovery_codes: codes });
    request.session.twoFactorCodes = { userId: user.id, sealed: service.sealRecoveryCodes(codes), at: Date.now(), shown: false };
    return done(request, reply, `${SECURITY}#two-factor`, status);
  };

  const guarded = { config: { auth: 'verified' as const }, preHandler: requirePasswordConfirmed(app) };

  // Enable: a new secret, not yet in force (two-factor stays off until a code confirms it).
  app.post(BASE, guarded, async (request, reply) => {
    const user = await currentUser(app, request);
    // Already on: nothing to begin (the page shows it on); a new secret needs Disable first.
    if (twoFactorEnabled(user)) return done(request, reply, `${SECURITY}#two-factor`);
    const setup = await service.begin(user);
    if (wantsJson(request)) return reply.header('cache-control', 'no-store').send({ secret: setup.secret, otpauth_url: setup.uri, svg: setup.qrSvg });
    return done(request, reply, `${SECURITY}#two-factor`);
  });

  app.post(`${BASE}/confirm`, { ...guarded, schema: { body: ConfirmBody }, attachValidation: true }, async (request, reply) => {
    const locale = localeFor(app, request);
    const form = { template: 'security/index', keep: [], data: {} as Record<string, unknown> };
    return submit(request, reply, form, async () => {
      const user = await currentUser(app, request);
      const errors = schemaErrors(request, locale);
      const codes = Object.keys(errors).length > 0 ? null : await service.confirm(user, field(request, 'code'));
      if (codes === null) {
        // A wrong code changes nothing: the set-up stays as it was, the page shows the field's error.
        Object.assign(form.data, await securityPageData(app, request, user));
        throw invalid({ code: [{ key: 'two_factor.errors.code' }] });
      }
      return handOver(request, reply, user, codes, t(locale, 'two_factor.enabled'));
    });
  });

  app.post(`${BASE}/recovery-codes`, guarded, async (request, reply) => {
    const user = await currentUser(app, request);
    const codes = await service.regenerateRecoveryCodes(user);
    if (codes === null) return done(request, reply, `${SECURITY}#two-factor`);
    return handOver(request, reply, user, codes, t(localeFor(app, request), 'two_factor.regenerated'));
  });

  // Disable (also cancels a set-up under way): the secret and the recovery codes are deleted.
  app.post(`${BASE}/disable`, guarded, async (request, reply) => {
    const user = await currentUser(app, request);
    const wasOn = twoFactorEnabled(user);
    await service.disable(user.id);
    delete request.session.twoFactorCodes;
    return done(request, reply, `${SECURITY}#two-factor`, wasOn ? t(localeFor(app, request), 'two_factor.disabled') : undefined);
  });

  // The codes just made, as a file: once, and only within a few minutes of being made.
  app.get(RECOVERY_CODES_FILE, { config: { auth: 'verified' } }, async (request, reply) => {
    const user = await currentUser(app, request);
    const locale = localeFor(app, request);
    const fresh = freshCodes(app, request, user.id);
    delete request.session.twoFactorCodes;
    if (fresh === null) return done(request, reply, `${SECURITY}#two-factor`, t(locale, 'two_factor.recovery.gone'));
    return reply
      .header('content-type', 'text/plain; charset=utf-8')
      .header('content-disposition', `attachment; filename="${recoveryCodesFileName(app.config.appName)}"`)
      .header('cache-control', 'no-store')
      .send(recoveryCodesText(locale, app.config.appName, user.email, fresh.codes));
  });
}
