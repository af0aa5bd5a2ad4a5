// Email + password, on the site's form, the panel's and POST /api/tokens. The three count their
// attempts in one bucket (per normalized email + address): one password behind three doors, whose
// guesses must not add up to three allowances. Each realm keeps its own limit and refusals: the
// site's and the panel's in the visitor's language on the email field (LOGIN_MAX_ATTEMPTS a
// window), the API's in English, Laravel's (LOGIN_RATE_LIMIT a minute, 0 for none; 401, 429).
import { fullFormats } from 'ajv-formats/dist/formats.js';
import { attributeName, t } from '../../i18n/translator.js';
import { tooManyAttempts } from '../../rate-limit/too-many-attempts.js';
import { AppError, ValidationError, type FieldErrors } from '../../shared/errors.js';
import { throttleEmail } from '../../throttle/throttle.js';
import type { UserService } from '../../users/users.service.js';
import { LOGIN_DECAY_SECONDS, LOGIN_MAX_ATTEMPTS } from '../../auth/auth.service.js';
import type { SignInMethod, ThrottlePolicy } from '../method.js';

/** POST /api/tokens' one answer for an unknown email and a wrong password. */
export const INVALID_CREDENTIALS = 'The provided credentials are incorrect.';

// The format check the route schemas use (ajv-formats' "email").
const EMAIL_FORMAT = fullFormats.email as RegExp;

export type PasswordProof = {
  email: string;
  password: string;
  /** The form's schema errors (in the visitor's language): with any, nothing is counted. */
  earlier?: FieldErrors;
};

const hasErrors = (errors: FieldErrors | undefined): errors is FieldErrors => errors !== undefined && Object.keys(errors).length > 0;


/** Signing in with the account's email and password. */
export function passwordMethod(deps: { users: Pick<UserService, 'attempt'>; apiAttempts: number }): SignInMethod<PasswordProof> {
  return {
    name: 'password',
    realms: ['site', 'panel', 'api'],
    strong: false,

    check({ email, earlier = {} }, { realm, locale }) {
      if (realm === 'panel' && hasErrors(earlier)) throw new ValidationError(earlier);
      if (realm !== 'site') return;
      // Laravel's email rule takes Unicode addresses; here `ⓐdmin@…` or `ａdmin@…` are judged by
      // their normalized spelling, so they count against admin@…'s bucket instead of being
      // turned away as malformed before the throttle sees them.
      const format: FieldErrors =
        earlier.email === undefined && !EMAIL_FORMAT.test(throttleEmail(email)) ? { email: [t(locale, 'validation.email', { attribute: attributeName('email', locale) })] } : {};
      // The email's message first, as the form shows its fields (a spread copies input-named keys
      // as own properties: none can reach a prototype).
      const errors: FieldErrors = { ...format, ...earlier };
      if (hasErrors(errors)) throw new ValidationError(errors);
    },

    // Normalized as the form's check is (case, look-alike forms); a shared store keeps only an
    // HMAC of the key.
    throttle({ email }, { realm, client, locale }): ThrottlePolicy | null {
      const key = `login|${throttleEmail(email)}|${client}`;
      if (realm === 'api') {
        const max = deps.apiAttempts;
        return max === 0 ? null : { key, max, decaySeconds: 60, limited: (seconds) => tooManyAttempts(max, seconds) };
      }
      return {
        key,
        max: LOGIN_MAX_ATTEMPTS,
        decaySeconds: LOGIN_DECAY_SECONDS,
        limited: (seconds) => {
          const message = realm === 'panel' ? t(locale, 'admin.login.throttle', { seconds }) : t(locale, 'auth.throttle', { seconds, minutes: Math.ceil(seconds / 60) });
          return new AppError(429, message, { email: [message] }, { 'retry-after': String(seconds) });
        },
      };
    },

    verify: ({ email, password }) => deps.users.attempt(email, password),

    // One message for an unknown email, a wrong password and (on the panel) an account without
    // panel access: the form never tells which accounts exist or which are administrators.
    refused({ realm, locale }) {
      if (realm === 'api') return new AppError(401, INVALID_CREDENTIALS);
      return new ValidationError({ email: [t(locale, realm === 'panel' ? 'admin.login.failed' : 'auth.failed')] });
    },
  };
}
