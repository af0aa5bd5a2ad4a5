// The domain services, built once per app from the database and the configuration. The API,
// the pages, the admin panel and the CLI all go through these.
import type { Config } from './config.js';
import type { Db } from './db/connect.js';
import { AccountDeletionService } from './modules/account-deletion/account-deletion.service.js';
import { AdminService } from './modules/admin/admin.service.js';
import { AuditService } from './modules/audit/audit.service.js';
import { createAccountServices, type AccountServiceOptions, type AccountServices } from './modules/auth/account-services.js';
import { IdentityService } from './modules/identities/identities.service.js';
import { MediaService } from './modules/media/media.service.js';
import { PasskeyService } from './modules/passkeys/passkeys.service.js';
import { PasswordHasher } from './modules/passwords/hasher.js';
import { PostService } from './modules/posts/posts.service.js';
import { DbSessionStore } from './modules/sessions/session-store.js';
import { SettingsService } from './modules/settings/settings.service.js';
import { SignInService } from './modules/sign-in/sign-in.service.js';
import { TokenService } from './modules/tokens/tokens.service.js';
import { TwoFactorService } from './modules/two-factor/two-factor.service.js';
import { UserService } from './modules/users/users.service.js';
import { then } from './lib/maybe-promise.js';
import { keptAdminTables, keptPasskeysOfUser, keptPendingEmailChanges, keptPublicPages, keptSessionRows, keptSiteValues, keptTokenLookup, keptTokensOfUser, keptUserById } from './perf/kept-reads.js';

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
  /** Images uploaded in the panel for posts: checked, stripped of metadata, stored in the database. */
  media: MediaService;
};

export function createServices(db: Db, config: Config, options: AccountServiceOptions = {}): Services {
  // The settings write their own audit lines.
  const audit = new AuditService(db);
  const settings = new SettingsService(db, audit, { appName: config.appName, locale: config.locale }, keptSiteValues(db));
  const core = {
    users: new UserService(db, keptUserById(db), new PasswordHasher(config.passwordHashing)),
    // The two hottest reads are kept in memory while the database is unchanged (src/perf/).
    tokens: new TokenService(db, config, keptTokenLookup(db, config), keptTokensOfUser(db)),
    // A post's language is one the site's settings offer.
    posts: new PostService(db, () => then(settings.site(), (site) => site.contentLocales), keptPublicPages(db)),
    settings,
    sessions: new DbSessionStore(db, config.sessionLifetimeMinutes, config.sessionAbsoluteLifetimeMinutes, keptSessionRows(db)),
    audit,
    twoFactor: new TwoFactorService(db, config.appKey, config.appName),
    identities: new IdentityService(db, config.oidcProviders.map((provider) => provider.name)),
  };
  // One deletion of an account for the security page, the panel and the CLI.
  const accountDeletion = new AccountDeletionService(db, core.audit);
  const accounts = createAccountServices(db, config, { ...core, pendingEmailChanges: keptPendingEmailChanges(db) }, options);
  const admin = new AdminService(db, config, { ...core, accountDeletion, emailChanges: accounts.emailChanges }, keptAdminTables(db));
  const passkeys = new PasskeyService(db, config, Date.now, keptPasskeysOfUser(db));
  const signIn = new SignInService({ ...core, passkeys, throttle: accounts.throttle, newDevices: accounts.newDevices, apiAttempts: config.loginRateLimit });
  const media = new MediaService(db, core.audit);
  return { ...core, admin, passkeys, ...accounts, signIn, accountDeletion, media };
}
