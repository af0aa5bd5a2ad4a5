// The signed-in account's own password, asked again before a sensitive action (Laravel's
// password.confirm) on the site and on the panel: the pipeline's prove() without a sign-in after
// it. Counted per account + address, LOGIN_MAX_ATTEMPTS a window, like a sign-in's.
import type { User } from '../../../db/types.js';
import { currentPasswordBucket, LOGIN_DECAY_SECONDS, LOGIN_MAX_ATTEMPTS } from '../../auth/auth.service.js';
import { t } from '../../i18n/translator.js';
import { AppError, ValidationError, type FieldErrors } from '../../shared/errors.js';
import type { SignInMethod } from '../method.js';
import type { MethodDeps } from './index.js';

export type PasswordConfirmationProof = {
  user: User;
  password: string;
  /** The form's schema errors (in the visitor's language): with any, nothing is counted. */
  earlier?: FieldErrors;
};

/** Confirming the password of an account already signed in (never a way in by itself). */
export function passwordConfirmationMethod(deps: Pick<MethodDeps, 'users'>): SignInMethod<PasswordConfirmationProof> {
  return {
    name: 'password-confirmation',
    realms: ['site', 'panel'],
    strong: false,
    check({ earlier = {} }) {
      if (Object.keys(earlier).length > 0) throw new ValidationError(earlier);
    },
    throttle: ({ user }, { client, locale }) => ({
      key: currentPasswordBucket(user.id, client),
      max: LOGIN_MAX_ATTEMPTS,
      decaySeconds: LOGIN_DECAY_SECONDS,
      limited: (seconds) => {
        const message = t(locale, 'auth.throttle', { seconds, minutes: Math.ceil(seconds / 60) });
        return new AppError(429, message, { password: [message] }, { 'retry-after': String(seconds) });
      },
    }),
    // An account made through a provider has no password: nothing matches it (after the same work).
    verify: async ({ user, password }) => ((await deps.users.passwords.verify(user.password, password)) ? user : null),
    refused: ({ locale }) => new ValidationError({ password: [t(locale, 'auth.password')] }),
  };
}
