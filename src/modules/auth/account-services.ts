// Builds the services of browser accounts (mail, throttle, remember-me, verification, password
// reset, the account actions) on top of the core ones; src/services.ts merges them in.
import type { Config } from '../../config.js';
import type { Db } from '../../db/connect.js';
import type { AuditService } from '../audit/audit.service.js';
import { NewDeviceService } from '../alerts/new-device.service.js';
import { EmailChangeService, type PendingRowRead } from '../email-change/email-change.service.js';
import { MailService, type SiteSource } from '../mail/mail.service.js';
import { createMailer, type MailLogger, type Mailer } from '../mail/mailer.js';
import { PasswordResetService } from '../password-reset/password-reset.service.js';
import type { Redis } from 'ioredis';
import { createRedisClient, rateLimitNamespace } from '../rate-limit/redis.js';
import { fallbacksOf } from '../rate-limit/store-state.js';
import { RememberService } from '../remember/remember.service.js';
import { deriveKey } from '../shared/keys.js';
import { DatabaseThrottleStore } from '../throttle/database-store.js';
import { FallbackThrottleStore, type ThrottleLogger } from '../throttle/fallback-store.js';
import { RedisThrottleStore } from '../throttle/redis-store.js';
import { MemoryThrottleStore, Throttle, type ThrottleStore } from '../throttle/throttle.js';
import type { TokenService } from '../tokens/tokens.service.js';
import type { TwoFactorService } from '../two-factor/two-factor.service.js';
import type { UserService } from '../users/users.service.js';
import { EmailVerificationService } from '../verification/verification.service.js';
import { AuthService } from './auth.service.js';

export type AccountServices = {
  mail: MailService;
  throttle: Throttle;
  remember: RememberService;
  verification: EmailVerificationService;
  passwordResets: PasswordResetService;
  auth: AuthService;
  /** Email changes waiting for the link mailed to the new address. */
  emailChanges: EmailChangeService;
  /** The devices each account signed in from, and the alert for a new one. */
  newDevices: NewDeviceService;
  /**
   * The deployment's Redis client with RATE_LIMIT_STORE=redis (else null), not yet connected: one
   * connection per process, shared by the throttles and the API rate limits (plugins/rate-limit.ts).
   */
  redis: Redis | null;
  /** Lets go of what the services hold open (the throttle's Redis connection); the app calls it on close. */
  close(): Promise<void>;
};

export type AccountServiceOptions = {
  /** The mail transport; by default the one MAIL_MAILER names (tests may pass their own). */
  mailer?: Mailer;
  /** Where mail failures (and the log mailer's lines) and throttle store failures go; the app passes its logger. */
  logger?: MailLogger & ThrottleLogger;
  /** Where throttle counts live; by default where RATE_LIMIT_STORE puts the API's (tests may pass their own). */
  throttleStore?: ThrottleStore;
};

// Outside the app (CLI) there is no pino logger: failures still reach stderr, as JSON.
const stderrLogger: MailLogger & ThrottleLogger = {
  info: () => undefined,
  warn: (details, message) => process.stderr.write(`${JSON.stringify({ level: 'warn', msg: message, ...details })}\n`),
  error: (details, message) => process.stderr.write(`${JSON.stringify({ level: 'error', msg: message, ...details })}\n`),
};

/**
 * The throttles' store: where RATE_LIMIT_STORE keeps the API's limits, so that with a shared
 * store every instance counts a login's failures together (with memory, N instances would give
 * an attacker N times the guesses). A shared store falls back to memory when it fails
 * (fallback-store.ts). The Redis client is connected by the API rate limits at start, or else at
 * the first throttled request, never before: the CLI builds these services and never needs it.
 */
function throttleStoreFor(db: Db, config: Config, redis: Redis | null, logger: ThrottleLogger): ThrottleStore {
  const secret = deriveKey(config.appKey, 'throttle');
  if (config.rateLimitStore === 'database') return new FallbackThrottleStore(new DatabaseThrottleStore(db, secret), logger, fallbacksOf(db));
  if (redis !== null) return new FallbackThrottleStore(new RedisThrottleStore(redis, { namespace: rateLimitNamespace(config.appKey), secret }), logger, fallbacksOf(redis));
  return new MemoryThrottleStore();
}

type Core = {
  users: UserService;
  /** Signing out everywhere drops an unconfirmed two-factor set-up. */
  twoFactor: TwoFactorService;
  tokens: TokenService;
  sessions: { destroyForUser(userId: number, exceptId?: string): Promise<void> };
  audit: AuditService;
  /** The site settings: mails sign with the site's name. */
  settings: SiteSource;
  /** Where a user's pending email change is read from (services.ts hands a kept one). */
  pendingEmailChanges?: PendingRowRead;
};

export function createAccountServices(db: Db, config: Config, core: Core, options: AccountServiceOptions = {}): AccountServices {
  const logger = options.logger ?? stderrLogger;
  const mailer = options.mailer ?? createMailer(config.mail, config.dataDir, logger, { development: config.env !== 'production' });
  const mail = new MailService(mailer, logger, core.settings);
  const redis = config.rateLimitStore === 'redis' ? createRedisClient(config.redisUrl) : null;
  const throttle = new Throttle(options.throttleStore ?? throttleStoreFor(db, config, redis, logger));
  const remember = new RememberService(db);
  const verification = new EmailVerificationService(db, mail, config);
  const emailChanges = new EmailChangeService(db, mail, config, Date.now, core.pendingEmailChanges);
  const auth = new AuthService({ ...core, remember, throttle, verification, emailChanges }, config);
  const passwordResets = new PasswordResetService(db, { users: core.users, mail, signOutEverywhere: (id) => auth.signOutEverywhere(id) }, config);
  const newDevices = new NewDeviceService(db, mail, config);
  return { mail, throttle, remember, verification, passwordResets, auth, emailChanges, newDevices, redis, close: async () => redis?.disconnect() };
}
