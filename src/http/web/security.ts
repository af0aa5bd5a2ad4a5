// GET /security: the account's security page. Each feature (two-factor sign-in, passkeys, the
// session list, email changes, account deletion) adds its section with addSecuritySection from
// its own route file; the page shows them in their `order`.
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { User } from '../../db/types.js';
import { formatList } from '../../modules/i18n/formats.js';
import { t } from '../../modules/i18n/translator.js';
import { AppError } from '../../modules/shared/errors.js';
import type { SecuritySection } from '../../plugins/types.js';
import { userOfRequest } from '../../plugins/web-guard.js';
import { localeFor } from '../shared/forms.js';
import { passwordConfirmed } from './confirm-password.js';


/** Adds a section to the security page (the list is decorated once, in http/web/index.ts). */
export function addSecuritySection(app: FastifyInstance, section: SecuritySection): void {
  app.securitySections.push(section);
  app.securitySections.sort((a, b) => a.order - b.order);
}

/** The signed-in user's row (the guard resolved it this request). */
export async function currentUser(app: FastifyInstance, request: FastifyRequest): Promise<User> {
  const user = await userOfRequest(app, request, request.siteUser!.id);
  if (user === undefined) throw new AppError(401, 'Unauthenticated.');
  return user;
}

/**
 * What the page's sensitive actions ask for first, as their notes say it: null for the password;
 * for an account without one, its other ways to confirm as one phrase ("a passkey or Corp ID":
 * a passkey, the connected providers still configured), '' when it has none of them.
 */
async function confirmWays(app: FastifyInstance, request: FastifyRequest, user: User): Promise<string | null> {
  if (user.password !== null) return null;
  const locale = localeFor(app, request);
  const linked = new Set((await app.services.identities.listFor(user.id)).map((identity) => identity.provider));
  const ways = app.config.oidcProviders.filter((provider) => linked.has(provider.name)).map((provider) => provider.label);
  if ((await app.services.passkeys.count(user.id)) > 0) ways.unshift(t(locale, 'passwordless.a_passkey'));
  return formatList(locale, ways, 'disjunction');
}

/** The security page's data for this user: every section, whether the password was just confirmed, and how it would be. */
export async function securityPageData(app: FastifyInstance, request: FastifyRequest, user: User, confirmed = passwordConfirmed(app, request)): Promise<Record<string, unknown>> {
  // The sections read their own rows: together, one round trip on PostgreSQL rather than one each.
  const [sections, ways] = await Promise.all([
    Promise.all(app.securitySections.map(async (section) => ({ template: section.template, data: await section.load(request, user) }))),
    confirmWays(app, request, user),
  ]);
  return { sections, confirmed, confirmWays: ways };
}

export async function securityRoutes(app: FastifyInstance): Promise<void> {
  app.get('/security', { config: { auth: 'verified' } }, async (request, reply) =>
    reply.page('security/index', await securityPageData(app, request, await currentUser(app, request))),
  );
}
