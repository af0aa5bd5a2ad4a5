// The domain services, built once per app from the database and the configuration. The API,
// the pages, the admin panel and the CLI all go through these.
import type { Config } from './config.js';
import type { Db } from './db/connect.js';
import { AccountDeletionService } from './modules/account-deletion/account-deletion.service.js';
import { AdminService } from './modules/admin/admin.service.js';
import { AuditService } from './modules/audit/audit.service.js';
import { createAccountServices, type AccountServiceOptions, type AccountServices } from './modules/auth/account-services.js';
import { IdentityService } from './modules/identities/identities.service.js';
import { PasskeyService } from './modules/passkeys/passkeys.service.js';
import { PostService } from './modules/posts/posts.service.js';
import { DbSessionStore } from './modules/sessions/session-store.js';
import { SettingsService } from './modules/settings/settings.service.js';
import { SignInService } from './modules/sign-in/sign-in.service.js';
import { TokenService } from './modules/tokens/tokens.service.js';
import { TwoFactorService } from './modules/two-factor/two-factor.service.js';
import { UserService } from './modules/users/users.service.js';
import { keptPublicPages, keptSiteValues, keptTokenLookup } from './perf/kept-reads.js';

export type Services = AccountServices & {
  users: UserService;
  tokens: TokenService;
  posts: PostService;
  settings: SettingsService;
  sessions: DbSessionStore;
  audit: AuditService;
  admin: AdminService;
  passkeys: PasskeyService;
  twoFactor: TwoFactorService;
  /** Accounts' links to OpenID Connect providers (sign-in, connect, disconnect, a first password). */
  identities: IdentityService;
  /** The one sign-in pipeline, after any method (password, passkey, the code step, a provider). */
  signIn: SignInService;
  /** Deleting an account, the same rows from every face. */
  accountDeletion: AccountDeletionService;
};

export function createServices(db: Db, config: Config, options: AccountServiceOptions = {}): Services {
  const core = {
    users: new UserService(db),
    // The two hottest reads are kept in memory while the database is unchanged (src/perf/).
    tokens: new TokenService(db, config, keptTokenLookup(db, config)),
    posts: new PostService(db, keptPublicPages(db)),
    settings: new SettingsService(db, { appName: config.appName, locale: config.locale }, keptSiteValues(db)),
    sessions: new DbSessionStore(db, config.sessionLifetimeMinutes, config.sessionAbsoluteLifetimeMinutes),
    audit: new AuditService(db),
    twoFactor: new TwoFactorService(db, config.appKey, config.appName),
    identities: new IdentityService(db, config.oidcProviders.map((provider) => provider.name)),
  };
  // One deletion of an account for the security page, the panel and the CLI.
  const accountDeletion = new AccountDeletionService(db, core.audit);
  const accounts = createAccountServices(db, config, core, options);
  const admin = new AdminService(db, config, { ...core, accountDeletion, emailChanges: accounts.emailChanges });
  const passkeys = new PasskeyService(db, config);
  const signIn = new SignInService({ ...core, passkeys, throttle: accounts.throttle, newDevices: accounts.newDevices, apiAttempts: config.loginRateLimit });
  return { ...core, admin, passkeys, ...accounts, signIn, accountDeletion };
}
