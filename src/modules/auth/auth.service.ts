// The browser-account actions behind the pages (and their JSON variants): login under a
// throttle, registration, profile and password changes, verification mails. Each returns the
// user or throws a ValidationError / AppError whose messages are already in the visitor's
// locale, so that any front end (a page, a JSON answer) only has to show them.
import { fullFormats } from 'ajv-formats/dist/formats.js';
import type { Config } from '../../config.js';
import type { User } from '../../db/types.js';
import type { AuditService } from '../audit/audit.service.js';
import { attributeName, t } from '../i18n/translator.js';
import { checkNewPassword } from '../passwords/policy.js';
import { hashPassword, verifyPassword } from '../passwords/hasher.js';
import type { RememberService } from '../remember/remember.service.js';
import { AppError, ValidationError, type FieldErrors } from '../shared/errors.js';
import { throttleEmail, type Throttle } from '../throttle/throttle.js';
import type { TokenService } from '../tokens/tokens.service.js';
import { canAccessPanel, type UserService } from '../users/users.service.js';
import type { EmailVerificationService } from '../verification/verification.service.js';

// The format check the route schemas use (ajv-formats' "email").
const EMAIL_FORMAT = fullFormats.email as RegExp;

export const LOGIN_MAX_ATTEMPTS = 5;
export const LOGIN_DECAY_SECONDS = 60;
export const VERIFICATION_MAX_SENDS = 6;
export const VERIFICATION_DECAY_SECONDS = 60;

type SessionEnder = { destroyForUser(userId: number): Promise<void> };

export type AuthDeps = {
  users: UserService;
  audit: Pick<AuditService, 'record'>;
  tokens: TokenService;
  sessions: SessionEnder;
  remember: RememberService;
  throttle: Throttle;
  verification: EmailVerificationService;
};

export type Registration = { name: string; email: string; password: string; password_confirmation: string };
export type PasswordChange = { current_password: string; password: string; password_confirmation: string };

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

  /**
   * The user whose credentials these are. Throttled per email + IP: past LOGIN_MAX_ATTEMPTS
   * failures in a window the answer is 429 and the password is not even checked, so guessing
   * costs the attacker the window, not an argon2 verification each.
   */
  async login(email: string, password: string, ip: string, locale: string, earlier: FieldErrors = {}): Promise<User> {
    const normalized = throttleEmail(email);
    // Laravel's email rule takes Unicode addresses; here `ⓐdmin@…` or `ａdmin@…` are judged by
    // their normalized spelling, so they count against admin@…'s bucket instead of being
    // turned away as malformed before the throttle sees them.
    const format: FieldErrors =
      earlier.email === undefined && !EMAIL_FORMAT.test(normalized) ? { email: [t(locale, 'validation.email', { attribute: attributeName('email', locale) })] } : {};
    const errors = ordered(['email', 'password'], earlier, format);
    if (hasErrors(errors)) throw new ValidationError(errors);
    const key = `login|${normalized}|${ip}`;
    const state = await this.deps.throttle.attempt(key, LOGIN_MAX_ATTEMPTS, LOGIN_DECAY_SECONDS);
    if (state.limited) {
      const message = t(locale, 'auth.throttle', { seconds: state.retryAfterSeconds, minutes: Math.ceil(state.retryAfterSeconds / 60) });
      throw new AppError(429, message, { email: [message] }, { 'retry-after': String(state.retryAfterSeconds) });
    }
    const user = await this.deps.users.attempt(email, password);
    // One message whether the address is unknown or the password wrong: no account enumeration.
    if (user === null) throw new ValidationError({ email: [t(locale, 'auth.failed')] });
    await this.deps.throttle.clear(key);
    return user;
  }

  /**
   * The administrator whose credentials these are, signing in to the panel (audited by
   * recordPanelLogin once the sign-in completes). The site's limits (LOGIN_MAX_ATTEMPTS a
   * window per email + IP) in a bucket of the panel's own, counted before the password is
   * checked, so a burst of parallel guesses cannot slip under the limit; once over it, no
   * password is checked at all. `earlier` holds the form's schema errors: with any, nothing is
   * counted.
   */
  async panelLogin(email: string, password: string, ip: string, locale: string, earlier: FieldErrors = {}): Promise<User> {
    if (hasErrors(earlier)) throw new ValidationError(earlier);
    const key = `admin-login|${throttleEmail(email)}|${ip}`;
    const state = await this.deps.throttle.attempt(key, LOGIN_MAX_ATTEMPTS, LOGIN_DECAY_SECONDS);
    if (state.limited) {
      const message = t(locale, 'admin.login.throttle', { seconds: state.retryAfterSeconds });
      throw new AppError(429, message, { email: [message] }, { 'retry-after': String(state.retryAfterSeconds) });
    }
    const user = await this.deps.users.attempt(email, password);
    // One message for an unknown email, a wrong password and an account without panel access:
    // the form never tells which accounts exist or which of them are administrators.
    if (user === null || !canAccessPanel(user)) throw new ValidationError({ email: [t(locale, 'admin.login.failed')] });
    await this.deps.throttle.clear(key);
    return user;
  }

  /**
   * The audit line of a panel sign-in, written when it completes: after the password, or after
   * the two-factor code when it is on (a right password without the code is no sign-in).
   */
  async recordPanelLogin(user: User, ip: string): Promise<void> {
    await this.deps.audit.record(user, 'admin.login', { type: 'session', id: user.id, label: user.email }, {}, ip);
  }

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
    await hashPassword(password);
    this.deps.verification.sendAccountExists(owner, locale);
    return null;
  }

  /** Changes name and email (the API's rules); a new address is unverified and, when verification is on, gets a link. */
  async updateProfile(user: User, changes: { name: string; email: string }, locale: string): Promise<{ user: User; emailChanged: boolean }> {
    let updated: User;
    try {
      updated = await this.deps.users.updateProfile(user, changes);
    } catch (error) {
      throw localized(error, locale);
    }
    const emailChanged = updated.email !== user.email;
    if (emailChanged && this.config.mustVerifyEmail) this.deps.verification.send(updated, locale);
    return { user: updated, emailChanged };
  }

  /**
   * Checks the current password and sets the new one, then signs the user out everywhere: every
   * browser session, every remembered device and every API token (the API's own password change
   * revokes the other tokens too). The caller logs the current browser back in with a new id.
   *
   * The current password is checked here, so the form is an oracle for it to whoever holds the
   * session (a borrowed or stolen one): throttled per user + IP like the login and the password
   * confirmation. Past LOGIN_MAX_ATTEMPTS tries in a window the answer is 429 and no password is
   * checked; a successful change clears the count.
   */
  async changePassword(user: User, input: PasswordChange, locale: string, ip: string, earlier: FieldErrors = {}): Promise<void> {
    const key = `change-password|${user.id}|${ip}`;
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
      if (earlier.current_password === undefined && !(await verifyPassword(user.password, input.current_password))) {
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
    await this.signOutEverywhere(user.id);
  }

  /** Ends every session, remembered device and API token of the user. */
  async signOutEverywhere(userId: number): Promise<void> {
    await this.deps.sessions.destroyForUser(userId);
    await this.deps.remember.forgetAll(userId);
    await this.deps.tokens.revokeAll(userId);
  }

  /**
   * Checks the signed-in user's password before a sensitive action (Laravel's password.confirm),
   * throttled per user + IP like the login: past LOGIN_MAX_ATTEMPTS failures in a window the
   * answer is 429 and the password is not checked.
   */
  async confirmPassword(user: User, password: string, ip: string, locale: string, earlier: FieldErrors = {}): Promise<void> {
    if (hasErrors(earlier)) throw new ValidationError(earlier);
    const key = `confirm-password|${user.id}|${ip}`;
    const state = await this.deps.throttle.attempt(key, LOGIN_MAX_ATTEMPTS, LOGIN_DECAY_SECONDS);
    if (state.limited) {
      const message = t(locale, 'auth.throttle', { seconds: state.retryAfterSeconds, minutes: Math.ceil(state.retryAfterSeconds / 60) });
      throw new AppError(429, message, { password: [message] }, { 'retry-after': String(state.retryAfterSeconds) });
    }
    if (!(await verifyPassword(user.password, password))) throw new ValidationError({ password: [t(locale, 'auth.password')] });
    await this.deps.throttle.clear(key);
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
