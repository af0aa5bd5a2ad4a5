// Browser pages and form actions. Each route declares its guard (config.auth, see WebAuth).
import type { FastifyInstance } from 'fastify';
import { isLocale } from '../../modules/i18n/translator.js';
import { apiTokenRoutes } from './api-tokens.js';
import { LOCALE_COOKIE } from '../../plugins/views.js';
import { loginRoutes } from './login.js';
import { twoFactorChallengeRoutes } from './two-factor-challenge.js';
import { logoutRoutes } from './logout.js';
import { passwordResetRoutes } from './password-reset.js';
import { profileRoutes } from './profile.js';
import { registerRoutes } from './register.js';
import { rememberLogin } from './remember.js';
import { verifyEmailRoutes } from './verify-email.js';
import { safeBackPath } from '../shared/back-path.js';
import { ErrorEnvelope } from '../shared/schemas.js';
import type { ConfirmExtra, SecuritySection } from '../../plugins/types.js';
import { confirmPasswordRoutes } from './confirm-password.js';
import { passkeyRoutes } from './passkeys.js';
import { securityRoutes } from './security.js';
import { twoFactorRoutes } from './two-factor.js';
import { browserSessionRoutes } from './browser-sessions.js';
import { accountDeleteRoutes } from './account-delete.js';
import { emailChangeRoutes } from './email-change.js';
import { blogRoutes } from './blog.js';
import { faviconRoutes } from './favicon.js';
import { vendorRoutes } from './vendor.js';
import { oidcPageLocals, oidcRoutes } from './oidc.js';
import { namePlugins } from '../shared/plugin-names.js';

// Display names for Fastify, which otherwise searches require.cache for each (shared/plugin-names.ts).
namePlugins({ blogRoutes, loginRoutes, twoFactorChallengeRoutes, logoutRoutes, registerRoutes, passwordResetRoutes, verifyEmailRoutes, profileRoutes, apiTokenRoutes, confirmPasswordRoutes, securityRoutes, twoFactorRoutes, browserSessionRoutes, accountDeleteRoutes, emailChangeRoutes, passkeyRoutes, oidcRoutes, faviconRoutes, vendorRoutes });

export async function webRoutes(app: FastifyInstance): Promise<void> {
  // The envelope the SPA's JSON answers are (spa-contract.ts), shared as the API shares it.
  app.addSchema(ErrorEnvelope);
  // Filled by the route files below (addSecuritySection), read by GET /security.
  app.decorate<SecuritySection[]>('securitySections', []);
  app.decorate<ConfirmExtra[]>('confirmExtras', []);
  // The home page and the blog: the newest posts of the visitor's language (blog.ts).
  await app.register(blogRoutes);

  app.get<{ Params: { locale: string } }>('/locale/:locale', { config: { auth: 'public' } }, async (request, reply) => {
    const { locale } = request.params;
    if (isLocale(locale)) {
      void reply.setCookie(LOCALE_COOKIE, locale, { path: '/', sameSite: 'lax', httpOnly: true, maxAge: 365 * 24 * 3600 });
    }
    return reply.redirect(safeBackPath(request.headers.referer, app.config.appUrl), 303);
  });

  app.get('/dashboard', { config: { auth: 'user' } }, async (_request, reply) => reply.page('dashboard', { mustVerify: app.config.mustVerifyEmail }));

  // Accounts: one file per action, as Breeze has one controller per action.
  rememberLogin(app);
  // The providers' buttons on /login and /register (OIDC_PROVIDERS).
  oidcPageLocals(app);
  await app.register(loginRoutes);
  await app.register(twoFactorChallengeRoutes);
  await app.register(logoutRoutes);
  await app.register(registerRoutes);
  await app.register(passwordResetRoutes);
  await app.register(verifyEmailRoutes);
  await app.register(profileRoutes);
  await app.register(apiTokenRoutes);
  // Account security: the password confirmation and the security page's sections.
  await app.register(confirmPasswordRoutes);
  await app.register(securityRoutes);
  await app.register(twoFactorRoutes);
  await app.register(browserSessionRoutes);
  await app.register(accountDeleteRoutes);
  await app.register(emailChangeRoutes);
  await app.register(passkeyRoutes);
  // Sign-in with OpenID Connect providers, and their section of /security.
  await app.register(oidcRoutes);
  await app.register(faviconRoutes);
  await app.register(vendorRoutes);

  // Deliveries still under way finish before the process ends; then the transport closes.
  app.addHook('onClose', async () => {
    await app.services.mail.settled();
    app.services.mail.close();
  });
}
