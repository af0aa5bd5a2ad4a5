// The browser-account actions behind the pages (and their JSON variants): registration, profile
// and password changes, verification mails (signing in is modules/sign-in's). Each returns the
// user or throws a ValidationError / AppError whose messages are already in the visitor's
// locale, so that any front end (a page, a JSON answer) only has to show them.
import type { Config } from '../../config.js';
import type { User } from '../../db/types.js';
import type { Acting, AuditService } from '../audit/audit.service.js';
import { attributeName, t } from '../i18n/translator.js';
import { checkNewPassword } from '../passwords/policy.js';
import type { RememberService } from '../remember/remember.service.js';
import { AppError, ValidationError, type FieldErrors } from '../shared/errors.js';
import type { Throttle } from '../throttle/throttle.js';
import type { TokenService } from '../tokens/tokens.service.js';
import type { UserService } from '../users/users.service.js';
import type { EmailVerificationService } from '../verification/verification.service.js';
import type { EmailChangeService } from '../email-change/email-change.service.js';
import type { TwoFactorService } from '../two-factor/two-factor.service.js';

export const LOGIN_MAX_ATTEMPTS = 5;
export const LOGIN_DECAY_SECONDS = 60;
export const VERIFICATION_MAX_SENDS = 6;
export const VERIFICATION_DECAY_SECONDS = 60;

/**
 * The one count of guesses at a signed-in account's current password, per account and client,
 * whichever form asks for it (the password confirmation, the password change, the API's email
 * change): two forms must not give a borrowed session twice the guesses.
 */
export function currentPasswordBucket(userId: number, client: string): string {
  return `confirm-password|${userId}|${client}`;
}

type SessionEnder = { destroyForUser(userId: number, exceptId?: string): Promise<void> };

export type AuthDeps = {
  users: UserService;
  audit: Pick<AuditService, 'record' | 'recordBy'>;
  tokens: TokenService;
  sessions: SessionEnder;
  remember: RememberService;
  throttle: Throttle;
  verification: EmailVerificationService;
  emailChanges: Pick<EmailChangeService, 'request' | 'pending' | 'withdraw'>;
  twoFactor: Pick<TwoFactorService, 'discardPendingSetup'>;
};

/**
 * How the person asking for an email change proved they hold the account: the current password
 * (the API, checked here under a throttle) or a fresh password confirmation the page asked for.
 */
export type EmailChangeProof = { currentPassword: string | undefined; ip: string } | 'password-confirmed';

/**
 * What signing out everywhere leaves to the one who asked: its own browser session (and its
 * remember-me device) or its own API token. Everything else of the user ends.
 */
export type KeptAccess = { sessionId?: string; rememberSelector?: string | null; tokenId?: number };

export type Registration = { name: string; email: string; password: string; password_confirmation: string };
export type PasswordChange = { current_password: string; password: string; password_confirmation?: string | undefined };

/**
 * Errors of several checks, keyed in the order the form shows its fields. Field names may come
 * from input: merged in a Map, never in an object where `constructor` or `toString` already is.
 */
function ordered(order: readonly string[], ...maps: FieldErrors[]): FieldErrors {
  const merged = new Map<string, string[]>();
  for (const map of maps) for (const [field, messages] of Object.entries(map)) merged.set(field, [...(merged.get(field) ?? []), ...messages]);
  const fields = [...order.filter((field) => merged.has(field)), ...[...merged.keys()].filter((field) => !order.includes(field))];
  return Object.fromEntries(fields.map((field) => [field, merged.get(field)!]));
}

const hasErrors = (errors: FieldErrors): boolean => Object.keys(errors).length > 0;

/** The users module writes message keys; the pages speak the visitor's language. */
function localized(error: unknown, locale: string): unknown {
  return error instanceof ValidationError ? new ValidationError(error.errorsIn(locale)) : error;
}

export class AuthService {
  constructor(
    private readonly deps: AuthDeps,
    private readonly config: Pick<Config, 'mustVerifyEmail'>,
  ) {}

  /** The audit line of leaving the panel, when the session still names an existing account. */
  async panelLogout(userId: number | undefined, ip: string): Promise<void> {
    const user = userId === undefined ? undefined : await this.deps.users.findById(userId);
    if (user !== undefined) await this.deps.audit.record(user, 'admin.logout', { type: 'session', id: user.id, label: user.email }, {}, ip);
  }

  /**
   * Creates an unverified account and, when verification is on, mails the link. `earlier` holds
   * the form's schema errors, so one answer lists every problem at once.
   */
  async register(input: Registration, locale: string, earlier: FieldErrors = {}): Promise<User | null> {
    const unique: FieldErrors = {};
    const existing = earlier.email === undefined ? await this.deps.users.findByEmail(input.email) : undefined;
    // With verification on, a taken address is never revealed: the visitor gets the answer of a
    // new registration (null here) and the owner a mail saying someone tried to use it.
    const hideTaken = this.config.mustVerifyEmail;
    if (existing !== undefined && !hideTaken) {
      unique.email = [t(locale, 'validation.unique', { attribute: attributeName('email', locale) })];
    }
    const password = earlier.password === undefined ? checkNewPassword(input.password, input.password_confirmation, locale) : {};
    const errors = ordered(['name', 'email', 'password'], earlier, unique, password);
    if (hasErrors(errors)) throw new ValidationError(errors);
    if (existing !== undefined) return this.registrationOfTakenAddress(existing, input.password, locale);
    let user: User;
    try {
      user = await this.deps.users.create({ name: input.name, email: input.email, password: input.password, verified: false });
    } catch (error) {
      // Taken between the check and the insert: still not revealed.
      if (hideTaken && error instanceof ValidationError && error.errors.email !== undefined) {
        const owner = await this.deps.users.findByEmail(input.email);
        if (owner !== undefined) return this.registrationOfTakenAddress(owner, input.password, locale);
      }
      throw localized(error, locale);
    }
    if (this.config.mustVerifyEmail) this.deps.verification.send(user, locale);
    return user;
  }

  // Costs what a registration costs (one argon2id hash, one mail in the background), so the
  // answer time does not tell either.
  private async registrationOfTakenAddress(owner: User, password: string, locale: string): Promise<null> {
    await this.deps.users.passwords.hash(password);
    this.deps.verification.sendAccountExists(owner, locale);
    return null;
  }

  /**
   * The one owner of a profile update, for every face. The name changes at once; a new email
   * never does: it becomes a pending change (EmailChangeService: a link to the new address, a
   * notice with a cancel link to the old one), and only after the holder proved the account is
   * theirs (`proof`). The address is dealt with first, so a refused one saves nothing. Returns
   * the user and the address now waiting for its link (null when none is pending). With `by`
   * (an administrator through the API), a new name leaves the panel's audit line.
   */
  async updateProfile(
    user: User,
    changes: { name?: string; email?: string },
    locale: string,
    proof: EmailChangeProof,
    by?: Acting,
  ): Promise<{ user: User; pendingEmail: string | null; emailChangeStarted: boolean }> {
    const changesEmail = changes.email !== undefined && changes.email !== user.email;
    if (changesEmail && proof !== 'password-confirmed') await this.checkCurrentPassword(user, proof.currentPassword, proof.ip, locale);
    let started = false;
    try {
      if (changesEmail) started = await this.deps.emailChanges.request(user, changes.email!, locale);
    } catch (error) {
      throw localized(error, locale);
    }
    let updated = user;
    if (changes.name !== undefined && changes.name !== user.name) {
      try {
        updated = await this.deps.users.updateProfile(user, { name: changes.name });
      } catch (error) {
        throw localized(error, locale);
      }
      if (by !== undefined) await this.deps.audit.recordBy(by, 'user.updated', { type: 'user', id: user.id, label: updated.email }, { fields: ['name'] });
    }
    const pending = await this.deps.emailChanges.pending(user.id);
    return { user: updated, pendingEmail: pending?.newEmail ?? null, emailChangeStarted: started };
  }

  /**
   * The current password, asked by the API before an email change: missing or wrong is a 422 on
   * `current_password`. Throttled in the password confirmation's bucket (per user + IP), so the
   * API is no better an oracle for the password than the pages are.
   */
  private async checkCurrentPassword(user: User, password: string | undefined, ip: string, locale: string): Promise<void> {
    if (password === undefined || password === '') {
      throw new ValidationError({ current_password: [t(locale, 'validation.required', { attribute: attributeName('current_password', locale) })] });
    }
    const key = currentPasswordBucket(user.id, ip);
    const state = await this.deps.throttle.attempt(key, LOGIN_MAX_ATTEMPTS, LOGIN_DECAY_SECONDS);
    if (state.limited) {
      const message = t(locale, 'auth.throttle', { seconds: state.retryAfterSeconds, minutes: Math.ceil(state.retryAfterSeconds / 60) });
      throw new AppError(429, message, { current_password: [message] }, { 'retry-after': String(state.retryAfterSeconds) });
    }
    if (!(await this.deps.users.passwords.verify(user.password, password))) throw new ValidationError({ current_password: [t(locale, 'validation.current_password')] });
    await this.deps.throttle.clear(key);
  }

  /**
   * The one owner of a password change, for every face: checks the current password and sets
   * the new one, then signs the user out everywhere (signOutEverywhere) but for what `keep` names:
   * the API keeps the calling token, an SPA its own session; the profile page keeps nothing and
   * logs the current browser back in with a new id.
   *
   * The current password is checked here, so the form is an oracle for it to whoever holds the
   * session (a borrowed or stolen one): throttled per user + IP in the password confirmation's
   * count (currentPasswordBucket). Past LOGIN_MAX_ATTEMPTS tries in a window the answer is 429
   * and no password is checked; a successful change clears the count. `ip` is the client as the sign-in pipeline
   * counts it (normalizeIP: an IPv6 client by its /64), which every face passes. With `by` (an
   * administrator through the API), the change leaves the panel's audit line, naming the field.
   */
  async changePassword(user: User, input: PasswordChange, locale: string, ip: string, earlier: FieldErrors = {}, keep: KeptAccess = {}, by?: Acting): Promise<void> {
    const key = currentPasswordBucket(user.id, ip);
    if (earlier.current_password === undefined) {
      const state = await this.deps.throttle.attempt(key, LOGIN_MAX_ATTEMPTS, LOGIN_DECAY_SECONDS);
      if (state.limited) {
        const message = t(locale, 'auth.throttle', { seconds: state.retryAfterSeconds, minutes: Math.ceil(state.retryAfterSeconds / 60) });
        throw new AppError(429, message, { current_password: [message] }, { 'retry-after': String(state.retryAfterSeconds) });
      }
    }
    const rules = earlier.password === undefined ? checkNewPassword(input.password, input.password_confirmation, locale) : {};
    if (hasErrors(rules) || hasErrors(earlier)) {
      const current: FieldErrors = {};
      if (earlier.current_password === undefined && !(await this.deps.users.passwords.verify(user.password, input.current_password))) {
        current.current_password = [t(locale, 'validation.current_password')];
      }
      throw new ValidationError(ordered(['current_password', 'password'], earlier, current, rules));
    }
    try {
      await this.deps.users.changePassword(user.id, input.current_password, input.password);
    } catch (error) {
      throw localized(error, locale);
    }
    await this.deps.throttle.clear(key);
    await this.signOutEverywhere(user.id, keep);
    if (by !== undefined) await this.deps.audit.recordBy(by, 'user.updated', { type: 'user', id: user.id, label: user.email }, { fields: ['password'] });
  }

  /**
   * The one owner of a first password, for an account made through a provider (no password
   * yet): the password rules, then a write that can never replace a password (that is a change:
   * changePassword, with the current password and every other session ended). False when the
   * account already has one. Nothing else ends: no credential anyone knew has changed.
   */
  async setFirstPassword(user: Pick<User, 'id'>, password: string, confirmation: string | undefined, locale: string): Promise<boolean> {
    const errors = checkNewPassword(password, confirmation, locale);
    if (hasErrors(errors)) throw new ValidationError(errors);
    return this.deps.users.setFirstPassword(user.id, password);
  }

  /**
   * Ends every session (site and panel), remembered device and API token of the user, but for
   * what `keep` names (the caller's own). What was started under the old credentials goes too:
   * a pending email change and an unconfirmed two-factor set-up. Whoever started them may be the
   * one being shut out, and a link or a secret must not outlive the sessions that asked for it.
   */
  async signOutEverywhere(userId: number, keep: KeptAccess = {}): Promise<void> {
    await this.deps.sessions.destroyForUser(userId, keep.sessionId);
    await this.deps.remember.forgetAllExcept(userId, keep.rememberSelector ?? null);
    await this.deps.tokens.revokeAll(userId, keep.tokenId);
    await this.dropPendingChanges(userId);
  }

  /**
   * "Log out other browser sessions" (the security page): every other site and panel session
   * and remembered device ends; API tokens stay (their own page revokes them). Pending changes
   * go, as with any sign-out everywhere.
   */
  async signOutOtherBrowsers(userId: number, keep: { sessionId: string; rememberSelector: string | null }): Promise<void> {
    await this.deps.sessions.destroyForUser(userId, keep.sessionId);
    await this.deps.remember.forgetAllExcept(userId, keep.rememberSelector);
    await this.dropPendingChanges(userId);
  }

  // The pending email change and the two-factor set-up not yet confirmed.
  private async dropPendingChanges(userId: number): Promise<void> {
    await this.deps.emailChanges.withdraw(userId);
    await this.deps.twoFactor.discardPendingSetup(userId);
  }

  /** Mails a new verification link, at most VERIFICATION_MAX_SENDS a window per user. */
  async resendVerification(user: User, locale: string): Promise<void> {
    const state = await this.deps.throttle.attempt(`verify|${user.id}`, VERIFICATION_MAX_SENDS, VERIFICATION_DECAY_SECONDS);
    if (state.limited) {
      throw new AppError(429, t(locale, 'verification.throttle', { seconds: state.retryAfterSeconds }), {}, { 'retry-after': String(state.retryAfterSeconds) });
    }
    this.deps.verification.send(user, locale);
  }
}
