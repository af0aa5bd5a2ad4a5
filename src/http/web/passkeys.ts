// Passkeys (WebAuthn): the security page's section (list, add, remove), signing in with a
// passkey on the site and on the panel, and confirming the password with one. The ceremonies
// are JSON exchanges with public/passkeys.js; removing is a plain form. The panel's two sign-in
// routes live here too, beside the site's, because they share the challenge and the throttle:
// they are JSON endpoints the panel's login page calls, with the panel's own guard.
import { readFileSync } from 'node:fs';
import { Type } from '@sinclair/typebox';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { formatDateTime } from '../../modules/i18n/formats.js';
import { attributeName, t, type Locale } from '../../modules/i18n/translator.js';
import { LastWayInError } from '../../modules/identities/identities.service.js';
import { freshChallenge } from '../../modules/passkeys/passkeys.service.js';
import { passkeysSuggestedUrl, passkeysUnavailable } from '../../modules/passkeys/relying-party.js';
import type { Realm } from '../../modules/sign-in/sign-in.service.js';
import { ValidationError, notFound } from '../../modules/shared/errors.js';
import { flash } from '../../plugins/views.js';
import { wantsJson } from '../../plugins/web-guard.js';
import { done, localeFor, refusal } from '../shared/forms.js';
import { PasskeyAnswerBody, passkeyAnswer, passkeyProof, sendPasskeyOptions } from '../shared/passkey-proof.js';
import { addConfirmExtra, markPasswordConfirmed, requirePasswordConfirmed, takeConfirmIntended } from './confirm-password.js';
import { addSecuritySection, currentUser } from './security.js';
import { finishSignIn, signInContext } from '../shared/sign-in.js';

/** The browser half of WebAuthn, served by the service itself (no CDN; the CSP allows 'self' only). */
export const WEBAUTHN_SCRIPT_PATH = '/vendor/simplewebauthn-browser.js';

const MAX_ID = 2_147_483_647;

const NameBody = Type.Object({ name: Type.String({ maxLength: 255 }) });

/** A path id of a passkey; anything that is not one is simply not found. */
function passkeyId(raw: string): number {
  const id = /^[1-9][0-9]{0,9}$/.test(raw) ? Number(raw) : NaN;
  if (!(id <= MAX_ID)) throw notFound();
  return id;
}

/** A stored time in the visitor's language, in UTC (the server does not know the visitor's zone). */
function formatter(locale: Locale): (iso: string) => string {
  return (iso) => formatDateTime(locale, iso);
}

export async function passkeyRoutes(app: FastifyInstance): Promise<void> {
  const script = readFileSync(new URL('../dist/bundle/index.umd.min.js', import.meta.resolve('@simplewebauthn/browser')));
  const production = app.config.env !== 'development';

  /** Runs a JSON action; a 422 or 429 answers the {message, errors} envelope in the visitor's language. */
  const json = async (request: FastifyRequest, reply: FastifyReply, action: () => Promise<FastifyReply>): Promise<FastifyReply> => {
    try {
      return await action();
    } catch (error) {
      // The ceremony is a script's; a form posted by a browser here gets the error page.
      if (!wantsJson(request)) throw error;
      const refused = refusal(error, localeFor(app, request));
      return reply.code(refused.status).headers(refused.headers).header('cache-control', 'no-store').send({ message: refused.message, errors: refused.errors });
    }
  };

  /** A passkey sign-in on the site or the panel, through the pipeline (a passkey is two factors: no code step follows). */
  const passkeySignIn = async (request: FastifyRequest, reply: FastifyReply, realm: Exclude<Realm, 'api'>): Promise<FastifyReply> => {
    const { signIn } = app.services;
    const outcome = await signIn.attempt(signIn.methods.passkey, passkeyProof(request, realm), signInContext(app, request, realm));
    const finished = await finishSignIn(app, request, reply, outcome);
    return reply.header('cache-control', 'no-store').send({ redirect: finished.location });
  };

  app.get(WEBAUTHN_SCRIPT_PATH, { config: { auth: 'public' } }, async (_request, reply) =>
    reply
      .type('text/javascript; charset=utf-8')
      .header('cache-control', production ? 'public, max-age=3600' : 'no-cache')
      .send(script),
  );

  // Where browsers refuse passkeys for APP_URL, the section says why and what to set instead of
  // offering a button whose ceremony the browser would refuse.
  const unavailable = passkeysUnavailable(app.config.appUrl);
  const passkeysUnavailableNote = unavailable === null ? null : { reason: unavailable, appUrl: app.config.appUrl, suggestion: passkeysSuggestedUrl(app.config.appUrl, unavailable) };

  // The security page's section: the list, and the form to add one.
  addSecuritySection(app, {
    order: 20,
    template: '/security/passkeys',
    load: async (request, user) => {
      const passkeys = await app.services.passkeys.list(user.id);
      return {
        passkeys,
        passkeyWhen: formatter(localeFor(app, request)),
        // The last way in shows why it stays instead of a Remove the server would refuse (asked
        // only where there is a passkey to show: two statements the list without one never needs).
        lastPasskey: passkeys.length > 0 && (await app.services.identities.passkeyIsLastWayIn(user.id)),
        passkeysUnavailable: passkeysUnavailableNote,
      };
    },
  });

  // On the confirmation page, for a user who has a passkey.
  addConfirmExtra(app, {
    template: '/auth/passkey-confirm',
    load: async (request) => ((await app.services.passkeys.count(request.siteUser!.id)) > 0 ? {} : null),
  });

  // Adding a passkey: a fresh password confirmation, then the name, the options, the answer.
  app.post('/user/passkeys/options', { config: { auth: 'verified' }, preHandler: requirePasswordConfirmed(app), schema: { body: NameBody }, attachValidation: true }, async (request, reply) =>
    json(request, reply, async () => {
      const locale = localeFor(app, request);
      const name = request.validationError === undefined ? (request.body as { name: string }).name.trim() : '';
      if (name === '') throw new ValidationError({ name: [t(locale, 'validation.required', { attribute: attributeName('name', locale) })] });
      const { options, pending } = await app.services.passkeys.registrationOptions(await currentUser(app, request), name);
      request.session.passkeyRegistration = pending;
      return reply.header('cache-control', 'no-store').send({ options });
    }),
  );

  app.post('/user/passkeys', { config: { auth: 'verified' }, preHandler: requirePasswordConfirmed(app), schema: { body: PasskeyAnswerBody }, attachValidation: true }, async (request, reply) =>
    json(request, reply, async () => {
      // Used once: the challenge leaves the session before the answer is even looked at.
      const pending = freshChallenge(request.session.passkeyRegistration, 'register');
      delete request.session.passkeyRegistration;
      const passkey = await app.services.passkeys.register(request.siteUser!.id, pending, passkeyAnswer(request));
      flash(request, { status: t(localeFor(app, request), 'passkeys.added', { name: passkey.name }) });
      return reply.code(201).header('cache-control', 'no-store').send({ passkey, redirect: '/security' });
    }),
  );

  app.post<{ Params: { id: string } }>('/user/passkeys/:id/delete', { config: { auth: 'verified' }, preHandler: requirePasswordConfirmed(app) }, async (request, reply) => {
    // The owner is part of the deletion: another user's passkey is as good as absent.
    let removed: boolean;
    try {
      removed = await app.services.passkeys.remove(request.siteUser!.id, passkeyId(request.params.id));
    } catch (error) {
      if (!(error instanceof LastWayInError)) throw error;
      return done(request, reply, '/security', t(localeFor(app, request), 'oidc.last_passkey'));
    }
    if (!removed) throw notFound();
    return done(request, reply, '/security', t(localeFor(app, request), 'passkeys.removed'));
  });

  // Signing in on the site: no email, the authenticator offers its passkeys for this site.
  app.post('/passkeys/login/options', { config: { auth: 'guest' } }, async (request, reply) =>
    sendPasskeyOptions(request, reply, await app.services.passkeys.authenticationOptions('site')),
  );

  app.post('/passkeys/login', { config: { auth: 'guest' }, schema: { body: PasskeyAnswerBody }, attachValidation: true }, async (request, reply) =>
    json(request, reply, () => passkeySignIn(request, reply, 'site')),
  );

  // Signing in on the panel: the same, for an administrator only.
  app.post('/admin/passkeys/login/options', { config: { auth: 'admin-guest' } }, async (request, reply) =>
    sendPasskeyOptions(request, reply, await app.services.passkeys.authenticationOptions('panel')),
  );

  app.post('/admin/passkeys/login', { config: { auth: 'admin-guest' }, schema: { body: PasskeyAnswerBody }, attachValidation: true }, async (request, reply) =>
    json(request, reply, () => passkeySignIn(request, reply, 'panel')),
  );

  // Confirming the password with a passkey: one of the signed-in user's own.
  app.post('/user/confirm-password/passkey/options', { config: { auth: 'user' } }, async (request, reply) =>
    sendPasskeyOptions(request, reply, await app.services.passkeys.authenticationOptions('confirm', request.siteUser!.id)),
  );

  app.post('/user/confirm-password/passkey', { config: { auth: 'user' }, schema: { body: PasskeyAnswerBody }, attachValidation: true }, async (request, reply) =>
    json(request, reply, async () => {
      // The same proof and throttle as a sign-in, for one of the signed-in user's own passkeys.
      const userId = request.siteUser!.id;
      const { signIn } = app.services;
      await signIn.prove(signIn.methods.passkey, passkeyProof(request, 'confirm'), signInContext(app, request, 'site'), (user) => user.id === userId);
      markPasswordConfirmed(request);
      return reply.header('cache-control', 'no-store').send({ redirect: takeConfirmIntended(request) });
    }),
  );
}
