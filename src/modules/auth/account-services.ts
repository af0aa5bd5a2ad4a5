// Builds the services of browser accounts (mail, throttle, remember-me, verification, password
// reset, the account actions) on top of the core ones; src/services.ts merges them in.
import type { Config } from '../../config.js';
import type { Db } from '../../db/connect.js';
import { MailService } from '../mail/mail.service.js';
import { createMailer, type MailLogger, type Mailer } from '../mail/mailer.js';
import { PasswordResetService } from '../password-reset/password-reset.service.js';
import { RememberService } from '../remember/remember.service.js';
import { MemoryThrottleStore, Throttle, type ThrottleStore } from '../throttle/throttle.js';
import type { TokenService } from '../tokens/tokens.service.js';
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
};

export type AccountServiceOptions = {
  /** The mail transport; by default the one MAIL_MAILER names (tests may pass their own). */
  mailer?: Mailer;
  /** Where mail failures (and the log mailer's lines) go; the app passes its logger. */
  logger?: MailLogger;
  /** Where throttle counts live; per process by default. */
  throttleStore?: ThrottleStore;
};

// Outside the app (CLI) there is no pino logger: failures still reach stderr, as JSON.
const stderrLogger: MailLogger = {
  info: () => undefined,
  error: (details, message) => process.stderr.write(`${JSON.stringify({ level: 'error', msg: message, ...details })}\n`),
};

type Core = { users: UserService; tokens: TokenService; sessions: { destroyForUser(userId: number): Promise<void> } };

export function createAccountServices(db: Db, config: Config, core: Core, options: AccountServiceOptions = {}): AccountServices {
  const logger = options.logger ?? stderrLogger;
  const mail = new MailService(options.mailer ?? createMailer(config.mail, config.dataDir, logger), logger);
  const throttle = new Throttle(options.throttleStore ?? new MemoryThrottleStore());
  const remember = new RememberService(db);
  const verification = new EmailVerificationService(db, mail, config);
  const auth = new AuthService({ ...core, remember, throttle, verification }, config);
  const passwordResets = new PasswordResetService(db, { users: core.users, mail, signOutEverywhere: (id) => auth.signOutEverywhere(id) }, config);
  return { mail, throttle, remember, verification, passwordResets, auth };
}
