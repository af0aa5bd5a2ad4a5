// What a way in is to the sign-in pipeline (sign-in.service.ts): it only proves who the person
// is. Where the attempt is counted, what the refusals say and how the proof is checked are the
// method's; what happens after (the realm's rule, the second factor, the session or token, the
// audit line, the new-device alert) is the pipeline's, the same for every method.
import type { User } from '../../db/types.js';
import type { AppError } from '../shared/errors.js';

/**
 * Where a sign-in leads: the site (session.userId), the panel (session.adminUserId, for
 * administrators only) or the API (a personal access token).
 */
export type Realm = 'site' | 'panel' | 'api';

/**
 * Who is signing in where: the realm, the client's address (audit lines, alerts), the address its
 * attempts count by (`client`: an IPv6 client by its /64, as the API's limits, so rotating
 * addresses in one's own network buys no guesses), the language of the refusals.
 */
export type SignInContext = { realm: Realm; ip: string; client: string; locale: string };

/** The attempt counter of a method: LOGIN_MAX_ATTEMPTS-like, counted before the proof is checked. */
export type ThrottlePolicy = {
  key: string;
  max: number;
  decaySeconds: number;
  /** The 429 once over the limit (no proof is checked then). */
  limited(retryAfterSeconds: number): AppError;
};

export interface SignInMethod<Proof> {
  /** Its name in audit lines ("password", "passkey", "oidc"). */
  readonly name: string;
  /** The realms it may open; any other is refused before anything is counted. */
  readonly realms: readonly Realm[];
  /**
   * True when the proof is already two factors (a passkey: the device and its PIN or biometric):
   * no code is asked after it. Otherwise an account with two-factor on gives its code next.
   */
  readonly strong: boolean;
  /** Checks of the proof's form that come before anything is counted (throws a ValidationError). */
  check?(proof: Proof, context: SignInContext): void;
  /** The counter this attempt goes into; null when the method counts nothing. */
  throttle(proof: Proof, context: SignInContext): ThrottlePolicy | null;
  /** The account the proof proves, or null. */
  verify(proof: Proof, context: SignInContext): Promise<User | null>;
  /** The one refusal of a failed proof, whatever failed (no account enumeration). */
  refused(context: SignInContext): AppError;
}
