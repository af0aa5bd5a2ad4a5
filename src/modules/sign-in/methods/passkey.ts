// A passkey (WebAuthn) answering the challenge the session holds, on the site and on the panel.
// Its attempts are counted per IP (no email is typed): only failures in a row add up.
import { t } from '../../i18n/translator.js';
import type { PasskeyService, PendingChallenge } from '../../passkeys/passkeys.service.js';
import { AppError, ValidationError } from '../../shared/errors.js';
import type { UserService } from '../../users/users.service.js';
import type { SignInMethod } from '../method.js';

// Failed passkey sign-ins per IP: as many as the password's, in the same window.
const FAILED_MAX = 5;
const FAILED_DECAY_SECONDS = 60;

export type PasskeyProof = {
  /** The challenge the session held (already taken out of it: used once), or null. */
  pending: PendingChallenge | null;
  /** The browser's answer, checked by @simplewebauthn/server. */
  response: unknown;
  /** The body was no answer at all: refused before anything is counted. */
  malformed: boolean;
};

/** Signing in with a passkey: two factors already (the device, and its PIN or biometric). */
export function passkeyMethod(deps: { users: Pick<UserService, 'findById'>; passkeys: Pick<PasskeyService, 'authenticate'> }): SignInMethod<PasskeyProof> {
  return {
    name: 'passkey',
    realms: ['site', 'panel'],
    strong: true,
    check(proof, { locale }) {
      if (proof.malformed) throw new ValidationError({ passkey: [t(locale, 'passkeys.failed')] });
    },
    throttle: (_proof, { client, locale }) => ({
      key: `passkey-login|${client}`,
      max: FAILED_MAX,
      decaySeconds: FAILED_DECAY_SECONDS,
      limited: (seconds) => {
        const message = t(locale, 'passkeys.throttle', { seconds });
        return new AppError(429, message, { passkey: [message] }, { 'retry-after': String(seconds) });
      },
    }),
    async verify({ pending, response }) {
      const userId = await deps.passkeys.authenticate(pending, response);
      return userId === null ? null : ((await deps.users.findById(userId)) ?? null);
    },
    // One answer for every failure: an unknown passkey, a bad signature, an account that may not
    // enter (the panel's non-administrators), as a wrong password gets.
    refused: ({ locale }) => new ValidationError({ passkey: [t(locale, 'passkeys.failed')] }),
  };
}
