// The panel's own sign-in: /admin/login and /admin/logout. It sets and clears only
// session.adminUserId, so signing in or out here leaves the site's login (session.userId) as it
// is, and the site's login never opens the panel.
import { Type } from '@sinclair/typebox';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { FastifyRequest } from 'fastify';
import { LOGIN_DECAY_SECONDS, LOGIN_MAX_ATTEMPTS } from '../../modules/auth/auth.service.js';
import { t } from '../../modules/i18n/translator.js';
import { throttleEmail } from '../../modules/throttle/throttle.js';
import { canAccessPanel } from '../../modules/users/users.service.js';
import { done, localeFor, oldInput, schemaErrors } from '../shared/forms.js';
import { adminPage } from './support.js';

const LoginBody = Type.Object({
  email: Type.String({ minLength: 1, maxLength: 255, format: 'email' }),
  password: Type.String({ minLength: 1, maxLength: 1024 }),
});

/** Where to go after signing in: the panel page first asked for, else the dashboard. */
function intendedPanelPage(request: FastifyRequest): string {
  const intended = request.session.intended;
  if (typeof intended === 'string' && /^\/admin(\/|\?|$)/.test(intended) && !intended.startsWith('/admin/login')) {
    delete request.session.intended;
    return intended;
  }
  return '/admin';
}

/**
 * A new session id that keeps every value except `drop`. Signing in to one side must not sign the
 * other out, but must not keep a session id that someone could have planted before either.
 */
async function regenerateKeeping(request: FastifyRequest, drop: readonly string[]): Promise<void> {
  const keep = Object.keys(request.session).filter((key) => key !== 'cookie' && !drop.includes(key));
  await request.session.regenerate(keep);
}

export const loginRoutes: FastifyPluginAsyncTypebox = async (app) => {
  app.get('/login', { config: { auth: 'admin-guest' } }, async (request, reply) =>
    adminPage(request, reply, 'admin/login', null, { title: t(localeFor(app, request), 'admin.login.title') }),
  );

  app.post('/login', { config: { auth: 'admin-guest' }, schema: { body: LoginBody }, attachValidation: true }, async (request, reply) => {
    const locale = localeFor(app, request);
    const render = (errors: Record<string, string[]>, status: number) =>
      adminPage(request, reply, 'admin/login', null, { title: t(locale, 'admin.login.title'), errors, old: oldInput(request.body) }, status);
    const invalid = schemaErrors(request, locale);
    if (Object.keys(invalid).length > 0) return render(invalid, 422);

    const { email, password } = request.body;
    // The site's limits (5 a minute per email + IP) in a bucket of the panel's own. Counted
    // before the password is checked, so a burst of parallel guesses cannot slip under the limit;
    // once over it, no password is checked at all.
    const key = `admin-login|${throttleEmail(email)}|${request.ip}`;
    const state = await app.services.throttle.attempt(key, LOGIN_MAX_ATTEMPTS, LOGIN_DECAY_SECONDS);
    if (state.limited) {
      void reply.header('retry-after', String(state.retryAfterSeconds));
      return render({ email: [t(locale, 'admin.login.throttle', { seconds: state.retryAfterSeconds })] }, 429);
    }

    const user = await app.services.users.attempt(email, password);
    // One message for an unknown email, a wrong password and an account without panel access:
    // the form never tells which accounts exist or which of them are administrators.
    if (user === null || !canAccessPanel(user)) return render({ email: [t(locale, 'admin.login.failed')] }, 422);
    await app.services.throttle.clear(key);

    const location = intendedPanelPage(request);
    await regenerateKeeping(request, ['adminUserId', '_csrf']);
    request.session.adminUserId = user.id;
    request.logUser = user.id;
    await app.services.audit.record(user, 'admin.login', { type: 'session', id: user.id, label: user.email }, {}, request.ip);
    return reply.redirect(location, 303);
  });

  // 'public', not 'admin': an administrator demoted meanwhile (403 everywhere else) must still be
  // able to sign out. CSRF is checked all the same.
  app.post('/logout', { config: { auth: 'public' } }, async (request, reply) => {
    const id = request.session.adminUserId;
    const user = typeof id === 'number' ? await app.services.users.findById(id) : undefined;
    if (user !== undefined) {
      await app.services.audit.record(user, 'admin.logout', { type: 'session', id: user.id, label: user.email }, {}, request.ip);
    }
    if (id !== undefined) await regenerateKeeping(request, ['adminUserId']);
    return done(request, reply, '/admin/login', t(localeFor(app, request), 'admin.logout.done'));
  });
};
