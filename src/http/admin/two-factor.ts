// /admin/two-factor: the panel's set-up of two-factor sign-in, where an administrator without it
// is sent when ADMIN_REQUIRE_2FA is on. The same steps as the site's security page (a secret as
// QR code and text, one correct code, 8 recovery codes shown once with a one-time download), in
// the panel layout. The panel has no password-confirmation page, so the form that begins the
// set-up asks for the password itself: that is the panel's confirmation, kept in its own key of
// the session (the panel is its own realm: the site's confirmation, maybe of another account in
// the same browser, does not count) for PASSWORD_TIMEOUT. An administrator with a passkey may give
// it instead, as on the site's confirmation page; one without a password (made through a provider,
// then promoted) has only that, having signed in to the panel with it (a provider never opens the
// panel, so it does not confirm here either). The key and the QR code of a set-up under way are
// shown only while it is fresh. Turning it off stays on the site's security page (or the CLI).
import { Type } from '@sinclair/typebox';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { User } from '../../db/types.js';
import { t } from '../../modules/i18n/translator.js';
import { AppError, ValidationError, invalid, type FieldErrors } from '../../modules/shared/errors.js';
import { groupedSecret, recoveryCodesFileName, recoveryCodesText, twoFactorEnabled } from '../../modules/two-factor/two-factor.service.js';
import { wantsJson } from '../../plugins/web-guard.js';
import { done, field, localeFor, refusal, schemaErrors } from '../shared/forms.js';
import { PasskeyAnswerBody, passkeyProof, sendPasskeyOptions } from '../shared/passkey-proof.js';
import { signInContext } from '../shared/sign-in.js';
import { actorOf, adminPage } from './support.js';

// Routes are registered under the panel's /admin prefix; redirects and links need the full path.
const ROUTE = '/two-factor';
const PAGE = `/admin${ROUTE}`;
const DOWNLOAD_ROUTE = `${ROUTE}/recovery-codes.txt`;
const DOWNLOAD_MS = 15 * 60 * 1000;
/** The panel confirmation's challenge: its own purpose, so no other ceremony's answers it. */
const PASSKEY_PURPOSE = 'panel-confirm';

const BeginBody = Type.Object({ password: Type.String({ minLength: 1, maxLength: 4096 }) });
const ConfirmBody = Type.Object({ code: Type.String({ minLength: 1, maxLength: 64 }) });

export async function twoFactorRoutes(app: FastifyInstance): Promise<void> {
  const service = app.services.twoFactor;
  const guard = { config: { auth: 'admin' as const } };

  /** This administrator's fresh codes in the session, or null. */
  const freshCodes = (request: FastifyRequest, userId: number): { codes: string[]; shown: boolean } | null => {
    const kept = request.session.adminTwoFactorCodes;
    if (kept === undefined) return null;
    const codes = kept.userId === userId && Date.now() - kept.at < DOWNLOAD_MS ? service.openRecoveryCodes(kept.sealed) : null;
    if (codes === null) delete request.session.adminTwoFactorCodes;
    return codes === null ? null : { codes, shown: kept.shown };
  };

  /** Whether this administrator gave the password on the panel within PASSWORD_TIMEOUT seconds. */
  const confirmed = (request: FastifyRequest, admin: User): boolean => {
    const kept = request.session.adminPasswordConfirmed;
    return kept !== undefined && kept.userId === admin.id && Date.now() - kept.at < app.config.passwordTimeoutSeconds * 1000;
  };

  /** The administrator just confirmed it is them: the set-up begins (or continues with its key). */
  const confirmedNow = async (request: FastifyRequest, admin: User): Promise<void> => {
    request.session.adminPasswordConfirmed = { userId: admin.id, at: Date.now() };
    if (!twoFactorEnabled(admin) && (await service.pendingSetup(admin)) === null) await service.begin(admin);
  };

  const render = async (request: FastifyRequest, reply: FastifyReply, admin: User, errors: FieldErrors = {}, status = 200): Promise<FastifyReply> => {
    const fresh = freshCodes(request, admin.id);
    // Shown on one page view; after that only the download is left, until the next view.
    if (fresh !== null) {
      if (fresh.shown) delete request.session.adminTwoFactorCodes;
      else request.session.adminTwoFactorCodes = { ...request.session.adminTwoFactorCodes!, shown: true };
    }
    const enabled = twoFactorEnabled(admin);
    const setup = enabled ? null : await service.pendingSetup(admin);
    // A set-up under way (begun here, on the site or by another session) shows its key only to
    // a session that gave the password: whoever holds the key makes the codes that guard the account.
    const shown = setup !== null && confirmed(request, admin) ? setup : null;
    return adminPage(
      request,
      reply,
      'admin/two-factor',
      null,
      {
        title: t(localeFor(app, request), 'admin.two_factor.title'),
        state: enabled ? 'on' : setup === null ? 'off' : 'pending',
        locked: setup !== null && shown === null,
        qrSvg: shown?.qrSvg ?? null,
        secret: shown === null ? null : groupedSecret(shown.secret),
        recoveryCodes: fresh !== null && !fresh.shown ? fresh.codes : null,
        download: `/admin${DOWNLOAD_ROUTE}`,
        required: app.config.adminRequireTwoFactor,
        // How this administrator can confirm: the password, a passkey, or both.
        hasPassword: admin.password !== null,
        hasPasskey: (await app.services.passkeys.count(admin.id)) > 0,
        errors,
      },
      status,
    );
  };

  app.get(ROUTE, guard, async (request, reply) => render(request, reply, actorOf(request)));

  // Begin with the password (throttled): a new secret, not in force until a code confirms it.
  // A set-up already under way continues with its key (the owner may have scanned it).
  app.post(ROUTE, { ...guard, schema: { body: BeginBody }, attachValidation: true }, async (request, reply) => {
    const admin = actorOf(request);
    const locale = localeFor(app, request);
    try {
      await app.services.signIn.confirmPassword(admin, field(request, 'password'), signInContext(app, request, 'panel'), schemaErrors(request, locale));
    } catch (error) {
      const refused = refusal(error, locale);
      void reply.headers(refused.headers);
      return render(request, reply, admin, refused.errors, refused.status);
    }
    await confirmedNow(request, admin);
    return done(request, reply, PAGE);
  });

  // Or with a passkey of this administrator's (JSON, for /assets/passkeys.js): the same proof
  // and throttle as a panel sign-in with one (the pipeline's passkey method), for their own
  // passkeys only, on a challenge of this purpose.
  app.post(`${ROUTE}/passkey/options`, guard, async (request, reply) =>
    sendPasskeyOptions(request, reply, await app.services.passkeys.authenticationOptions(PASSKEY_PURPOSE, actorOf(request).id)),
  );

  app.post(`${ROUTE}/passkey`, { ...guard, schema: { body: PasskeyAnswerBody }, attachValidation: true }, async (request, reply) => {
    const admin = actorOf(request);
    const { signIn } = app.services;
    try {
      await signIn.prove(signIn.methods.passkey, passkeyProof(request, PASSKEY_PURPOSE), signInContext(app, request, 'panel'), (user) => user.id === admin.id);
    } catch (error) {
      // The ceremony is a script's (JSON); a form posted by a browser here gets the error page.
      if (!wantsJson(request)) throw error;
      const refused = refusal(error, localeFor(app, request));
      return reply.code(refused.status).headers(refused.headers).header('cache-control', 'no-store').send({ message: refused.message, errors: refused.errors });
    }
    await confirmedNow(request, admin);
    return reply.header('cache-control', 'no-store').send({ redirect: PAGE });
  });

  app.post(`${ROUTE}/confirm`, { ...guard, schema: { body: ConfirmBody }, attachValidation: true }, async (request, reply) => {
    const admin = actorOf(request);
    const locale = localeFor(app, request);
    try {
      const errors = schemaErrors(request, locale);
      if (Object.keys(errors).length > 0) throw new ValidationError(errors);
      // Only a session that gave the password saw the key: any other is sent to give it first
      // (a script gets 423, as from the site's password confirmation).
      if (!confirmed(request, admin)) {
        if (wantsJson(request)) throw new AppError(423, 'Password confirmation required.');
        return reply.redirect(PAGE, 303);
      }
      const codes = await service.confirm(admin, field(request, 'code'));
      if (codes === null) throw invalid({ code: [{ key: 'two_factor.errors.code' }] });
      request.session.adminTwoFactorCodes = { userId: admin.id, sealed: service.sealRecoveryCodes(codes), at: Date.now(), shown: false };
      return done(request, reply, PAGE, t(locale, 'two_factor.enabled'));
    } catch (error) {
      const refused = refusal(error, locale);
      void reply.headers(refused.headers);
      return render(request, reply, admin, refused.errors, refused.status);
    }
  });

  app.get(DOWNLOAD_ROUTE, guard, async (request, reply) => {
    const admin = actorOf(request);
    const locale = localeFor(app, request);
    const fresh = freshCodes(request, admin.id);
    delete request.session.adminTwoFactorCodes;
    if (fresh === null) return done(request, reply, PAGE, t(locale, 'two_factor.recovery.gone'));
    return reply
      .header('content-type', 'text/plain; charset=utf-8')
      .header('content-disposition', `attachment; filename="${recoveryCodesFileName(app.config.appName)}"`)
      .header('cache-control', 'no-store')
      .send(recoveryCodesText(locale, app.config.appName, admin.email, fresh.codes));
  });
}
