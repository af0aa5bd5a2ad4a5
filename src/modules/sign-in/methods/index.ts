// The ways in, by name. A new method is one file beside these (its proof, its throttle, its
// refusals, see ../method.ts) and one line here; the pipeline (../sign-in.service.ts) does the rest.
import type { IdentityService } from '../../identities/identities.service.js';
import type { PasskeyService } from '../../passkeys/passkeys.service.js';
import type { UserService } from '../../users/users.service.js';
import { oidcMethod } from './oidc.js';
import { passkeyMethod } from './passkey.js';
import { passwordConfirmationMethod } from './password-confirmation.js';
import { passwordMethod } from './password.js';

export type MethodDeps = {
  users: Pick<UserService, 'attempt' | 'findById' | 'passwords'>;
  passkeys: Pick<PasskeyService, 'authenticate'>;
  identities: Pick<IdentityService, 'signIn'>;
  /** LOGIN_RATE_LIMIT: POST /api/tokens' attempts a minute per email + address (0: none). */
  apiAttempts: number;
};

export function signInMethods(deps: MethodDeps) {
  return {
    password: passwordMethod(deps),
    passkey: passkeyMethod(deps),
    passwordConfirmation: passwordConfirmationMethod(deps),
    oidc: oidcMethod(deps),
  };
}

export type SignInMethods = ReturnType<typeof signInMethods>;
