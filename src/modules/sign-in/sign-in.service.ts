// One sign-in pipeline for every way in (STYLE.md habit 19): a method (methods/) only proves who
// the person is; identify → throttle → verify → the realm's rule → the second factor when due →
// complete happen here, once, whatever the method. The HTTP side (a new session id,
// remember-me, the answer) is one function per realm in src/http/shared/sign-in.ts.
import type { User } from '../../db/types.js';
import type { NewDeviceService, SignInNotice } from '../alerts/new-device.service.js';
import type { AuditService } from '../audit/audit.service.js';
import { assertTokenSecondFactor, passChallenge, type ChallengeDeps, type ChallengeInput, type TwoFactorChallenge } from '../auth/two-factor-challenge.js';
import { AppError, type FieldErrors } from '../shared/errors.js';
import type { Throttle } from '../throttle/throttle.js';
import type { TokenService } from '../tokens/tokens.service.js';
import { twoFactorEnabled } from '../two-factor/two-factor.service.js';
import { canAccessPanel } from '../users/users.service.js';
import type { Realm, SignInContext, SignInMethod } from './method.js';
import { signInMethods, type MethodDeps, type SignInMethods } from './methods/index.js';

export type { Realm, SignInContext, SignInMethod } from './method.js';

/** A proven sign-in, not yet completed. */
export type SignedIn = { status: 'signed-in'; user: User; realm: Realm; method: string };
/** A right first factor of an account with two-factor on: the code comes next (site and panel). */
export type SecondFactorDue = { status: 'second-factor'; user: User; realm: Exclude<Realm, 'api'>; method: string };
export type SignInOutcome = SignedIn | SecondFactorDue;

/** The code sent along with the password where no session can wait for it (POST /api/tokens). */
export type InlineSecondFactor = { code?: string; recovery_code?: string };

/**
 * What became of one sign-in attempt, for whoever watches (the metrics, docs/metrics.md):
 * `challenged` is a right first factor whose code comes next; `limited` a refusal by the
 * throttle; `failed` any other refusal. A failure of the service itself (the database away) is
 * none of these: it is no answer about the person.
 */
export type SignInEvent = { realm: Realm; method: string; outcome: 'succeeded' | 'challenged' | 'failed' | 'limited' };
export type SignInObserver = (event: SignInEvent) => void;

export type SignInDeps = ChallengeDeps &
  MethodDeps & {
    audit: Pick<AuditService, 'record'>;
    newDevices: Pick<NewDeviceService, 'notice'>;
    tokens: Pick<TokenService, 'issue'>;
    throttle: Throttle;
  };

/** The realm's own rule, after any method: the panel is for administrators only. */
function realmAdmits(realm: Realm, user: User): boolean {
  return realm !== 'panel' || canAccessPanel(user);
}

const AUDIT_ACTION = { site: 'auth.login', panel: 'admin.login' } as const;

export class SignInService {
  /** The registry of ways in: one file each under methods/. */
  readonly methods: SignInMethods;
  private readonly observers: SignInObserver[] = [];

  constructor(private readonly deps: SignInDeps) {
    this.methods = signInMethods(deps);
  }

  /**
   * Proves who the person is: the method's form checks, then its throttle (counted before the
   * proof is checked, so a burst of parallel guesses cannot slip under the limit; once over it
   * nothing is checked at all), then its proof. `accept` narrows who may pass (a confirmation:
   * the signed-in user only); a refused account gets the method's one refusal. A success clears
   * the count, so only failures in a row add up.
   */
  async prove<P>(method: SignInMethod<P>, proof: P, context: SignInContext, accept: (user: User) => boolean = () => true): Promise<User> {
    if (!method.realms.includes(context.realm)) throw method.refused(context);
    method.check?.(proof, context);
    const policy = method.throttle(proof, context);
    if (policy !== null) {
      const state = await this.deps.throttle.attempt(policy.key, policy.max, policy.decaySeconds);
      if (state.limited) throw policy.limited(state.retryAfterSeconds);
    }
    const user = await method.verify(proof, context);
    if (user === null || !accept(user)) throw method.refused(context);
    if (policy !== null) await this.deps.throttle.clear(policy.key);
    return user;
  }

  /**
   * Confirms the signed-in user's password before a sensitive action (site or panel): 422 on
   * `password` when wrong, 429 past the throttle (then no password is checked).
   */
  async confirmPassword(user: User, password: string, context: SignInContext, earlier: FieldErrors = {}): Promise<void> {
    await this.prove(this.methods.passwordConfirmation, { user, password, earlier }, context, (proved) => proved.id === user.id);
  }

  /**
   * A sign-in attempt with any method, in any realm: proved, admitted by the realm's rule, then
   * signed in, or (two-factor on, a method that is not two factors already) waiting for the code.
   * The API has no session to wait in: its code comes in the same request (`inline`).
   */
  async attempt<P>(method: SignInMethod<P>, proof: P, context: SignInContext, inline: InlineSecondFactor = {}): Promise<SignInOutcome> {
    let name = method.name;
    try {
      const user = await this.prove(method, proof, context, (candidate) => realmAdmits(context.realm, candidate));
      if (method.strong || !twoFactorEnabled(user)) return this.noted({ status: 'signed-in', user, realm: context.realm, method: name });
      if (context.realm === 'api') {
        name = `${method.name}+two-factor`;
        await assertTokenSecondFactor(this.deps, user, inline, context.client);
        return this.noted({ status: 'signed-in', user, realm: 'api', method: name });
      }
      return this.noted({ status: 'second-factor', user, realm: context.realm, method: name });
    } catch (error) {
      this.refusedWith(error, context.realm, name);
      throw error;
    }
  }

  /**
   * The code step of a pending challenge: signed in with the code or a recovery code, or null
   * when the account is gone (or, on the panel, no longer an administrator): start over.
   */
  async secondFactor(challenge: TwoFactorChallenge, input: ChallengeInput, context: Omit<SignInContext, 'realm'>): Promise<SignedIn | null> {
    const method = `${challenge.method}+two-factor`;
    const user = await passChallenge(this.deps, challenge, input, context.client, context.locale).catch((error: unknown) => {
      this.refusedWith(error, challenge.channel, method);
      throw error;
    });
    if (user === null || !realmAdmits(challenge.channel, user)) {
      this.record({ realm: challenge.channel, method, outcome: 'failed' });
      return null;
    }
    return this.noted({ status: 'signed-in', user, realm: challenge.channel, method });
  }

  /** Adds a watcher of every sign-in's outcome (the metrics plugin); it must not throw. */
  observe(observer: SignInObserver): void {
    this.observers.push(observer);
  }

  /** Tells the watchers of one outcome; also for a way in outside the pipeline (the remember-me cookie). */
  record(event: SignInEvent): void {
    for (const observer of this.observers) observer(event);
  }

  private noted<T extends SignInOutcome>(outcome: T): T {
    this.record({ realm: outcome.realm, method: outcome.method, outcome: outcome.status === 'signed-in' ? 'succeeded' : 'challenged' });
    return outcome;
  }

  /** A refusal (an AppError of the 4xx family: 429 is the throttle's) is an outcome; anything else is the service's failure. */
  private refusedWith(error: unknown, realm: Realm, method: string): void {
    if (!(error instanceof AppError) || error.status < 400 || error.status >= 500) return;
    this.record({ realm, method, outcome: error.status === 429 ? 'limited' : 'failed' });
  }

  /**
   * The domain's part of completing a sign-in on the site or the panel, after the HTTP side gave
   * it a new session: the audit line and the new-device notice (the alert when it is new).
   */
  async completeBrowser(signedIn: SignedIn & { realm: 'site' | 'panel' }, notice: Omit<SignInNotice, 'channel'>): Promise<void> {
    const { user, realm, method } = signedIn;
    await this.deps.audit.record(user, AUDIT_ACTION[realm], { type: 'session', id: user.id, label: user.email }, { method }, notice.ip);
    this.deps.newDevices.notice(user, { ...notice, channel: realm });
  }

  /**
   * Completes an API sign-in: the token (its secret shown once, its own expiry when asked for,
   * checked before the sign-in by TokenService.ownExpiry), its audit line, the new-device notice.
   */
  async issueToken(signedIn: SignedIn & { realm: 'api' }, deviceName: string, notice: Omit<SignInNotice, 'channel'>, expiresAt: Date | null = null): Promise<{ plaintext: string }> {
    const { user, method } = signedIn;
    const token = await this.deps.tokens.issue(user.id, deviceName, ['*'], expiresAt);
    await this.deps.audit.record(user, 'auth.token_issued', { type: 'token', id: token.id, label: deviceName }, { method }, notice.ip);
    this.deps.newDevices.notice(user, { ...notice, channel: 'api' });
    return token;
  }
}
