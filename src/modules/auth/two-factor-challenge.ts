// The second step of a sign-in with two-factor on (Fortify's two-factor challenge): after a
// correct password the session holds only a pending challenge (who, remember-me, which side,
// until when), never the password nor a signed-in user; the code (or a recovery code) then
// finishes the sign-in. The code guesses are throttled like the password: LOGIN_MAX_ATTEMPTS a
// window per account + IP, in one bucket for the site, the panel and the API, so the three doors
// do not each give an attacker who has the password five more guesses.
import type { User } from '../../db/types.js';
import { t } from '../i18n/translator.js';
import { AppError, ValidationError } from '../shared/errors.js';
import type { Throttle } from '../throttle/throttle.js';
import { twoFactorEnabled, type SignInProof, type TwoFactorService } from '../two-factor/two-factor.service.js';
import { canAccessPanel, type UserService } from '../users/users.service.js';
import { LOGIN_DECAY_SECONDS, LOGIN_MAX_ATTEMPTS } from './auth.service.js';

/** How long the code step waits after the password: 5 minutes, as the issue asks. */
export const CHALLENGE_LIFETIME_MS = 5 * 60_000;

export type ChallengeChannel = 'site' | 'panel';

/** What the session keeps between the first factor and the code (`method`: the first factor's name, for the audit line). */
export type TwoFactorChallenge = { userId: number; remember: boolean; channel: ChallengeChannel; method: string; expiresAt: number };

export type ChallengeDeps = {
  users: Pick<UserService, 'findById'>;
  twoFactor: Pick<TwoFactorService, 'verifySignIn'>;
  throttle: Throttle;
};

/** A challenge for the user who just gave the right first factor, valid CHALLENGE_LIFETIME_MS. */
export function newChallenge(userId: number, remember: boolean, channel: ChallengeChannel, method = 'password', now: number = Date.now()): TwoFactorChallenge {
  return { userId, remember, channel, method, expiresAt: now + CHALLENGE_LIFETIME_MS };
}

/**
 * The session's challenge when it is one of this side and not expired, else null. The value comes
 * from the session store: its shape is checked, not trusted.
 */
export function liveChallenge(value: unknown, channel: ChallengeChannel, now: number = Date.now()): TwoFactorChallenge | null {
  if (typeof value !== 'object' || value === null) return null;
  const challenge = value as Partial<TwoFactorChallenge>;
  if (challenge.channel !== channel || typeof challenge.userId !== 'number' || typeof challenge.expiresAt !== 'number') return null;
  if (challenge.expiresAt <= now) return null;
  const method = typeof challenge.method === 'string' && /^[a-z0-9:_-]{1,40}$/.test(challenge.method) ? challenge.method : 'password';
  return { userId: challenge.userId, remember: challenge.remember === true, channel, method, expiresAt: challenge.expiresAt };
}

/** The throttle bucket of code guesses for an account from an address (site, panel and API alike). */
const bucketOf = (userId: number, ip: string): string => `two-factor|${userId}|${ip}`;

/**
 * Checks a code or a recovery code for the user, counting the attempt first (a burst of parallel
 * guesses cannot slip under the limit). Past the limit: 429 with retry-after, and no code is
 * checked (`field` names where the page shows the message). True when the proof is good (the
 * window is then cleared); false for a wrong, replayed or used-up code.
 */
export async function attemptSecondFactor(deps: ChallengeDeps, user: User, proof: SignInProof, ip: string, locale: string, field = 'code'): Promise<boolean> {
  const key = bucketOf(user.id, ip);
  const state = await deps.throttle.attempt(key, LOGIN_MAX_ATTEMPTS, LOGIN_DECAY_SECONDS);
  if (state.limited) {
    const message = t(locale, 'two_factor_challenge.throttle', { seconds: state.retryAfterSeconds });
    throw new AppError(429, message, { [field]: [message] }, { 'retry-after': String(state.retryAfterSeconds) });
  }
  const valid = await deps.twoFactor.verifySignIn(user, proof);
  if (valid) await deps.throttle.clear(key);
  return valid;
}

/** What the challenge form sent: a code, or a recovery code. */
export type ChallengeInput = { code: string; recoveryCode: string };

/**
 * Finishes a challenge: the user of a live challenge whose proof is good. Null when the account
 * is gone (or, on the panel, no longer an administrator): the caller starts over at the password.
 * A missing field is a 422 on it; a wrong code a 422 on the field it was typed in.
 */
export async function passChallenge(deps: ChallengeDeps, challenge: TwoFactorChallenge, input: ChallengeInput, ip: string, locale: string): Promise<User | null> {
  const user = await deps.users.findById(challenge.userId);
  if (user === undefined || (challenge.channel === 'panel' && !canAccessPanel(user))) return null;
  const recovery = input.code.trim() === '' && input.recoveryCode.trim() !== '';
  const field = recovery ? 'recovery_code' : 'code';
  if (!recovery && input.code.trim() === '') throw new ValidationError({ code: [t(locale, 'two_factor_challenge.code_required')] });
  const proof: SignInProof = recovery ? { recoveryCode: input.recoveryCode } : { code: input.code };
  if (!(await attemptSecondFactor(deps, user, proof, ip, locale, field))) {
    throw new ValidationError({ [field]: [t(locale, recovery ? 'two_factor_challenge.recovery_invalid' : 'two_factor_challenge.code_invalid')] });
  }
  return user;
}

/**
 * The second factor of POST /api/tokens, asked only after a correct password (so its questions
 * tell a caller the password was right: inherent to a two-step sign-in, as with Fortify, and the
 * code itself is throttled). Nothing for an account without two-factor. Without a code: 422 on
 * `code`; a wrong, replayed or used-up one: 401; past the throttle: 429. In English, the API's
 * language.
 */
export async function assertTokenSecondFactor(deps: ChallengeDeps, user: User, input: { code?: string; recovery_code?: string }, ip: string): Promise<void> {
  if (!twoFactorEnabled(user)) return;
  const code = input.code?.trim() ?? '';
  const recoveryCode = input.recovery_code?.trim() ?? '';
  if (code === '' && recoveryCode === '') throw new ValidationError({ code: [t('en', 'two_factor_challenge.api_code_required')] });
  const proof: SignInProof = code !== '' ? { code } : { recoveryCode };
  if (!(await attemptSecondFactor(deps, user, proof, ip, 'en', code !== '' ? 'code' : 'recovery_code'))) {
    throw new AppError(401, t('en', 'two_factor_challenge.code_invalid'));
  }
}
