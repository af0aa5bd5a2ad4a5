// GET /security: the account's security page. Each feature (two-factor sign-in, passkeys, the
// session list, email changes, account deletion) adds its section with addSecuritySection from
// its own route file; the page shows them in their `order`.
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { User } from '../../db/types.js';
import { AppError } from '../../modules/shared/errors.js';
import type { SecuritySection } from '../../plugins/types.js';
import { passwordConfirmed } from './confirm-password.js';


/** Adds a section to the security page (the list is decorated once, in http/web/index.ts). */
export function addSecuritySection(app: FastifyInstance, section: SecuritySection): void {
  app.securitySections.push(section);
  app.securitySections.sort((a, b) => a.order - b.order);
}

/** The signed-in user's row (the guard resolved it this request). */
export async function currentUser(app: FastifyInstance, request: FastifyRequest): Promise<User> {
  const user = await app.services.users.findById(request.siteUser!.id);
  if (user === undefined) throw new AppError(401, 'Unauthenticated.');
  return user;
}

export async function securityRoutes(app: FastifyInstance): Promise<void> {
  app.get('/security', { config: { auth: 'verified' } }, async (request, reply) => {
    const user = await currentUser(app, request);
    const sections = [];
    for (const section of app.securitySections) sections.push({ template: section.template, data: await section.load(request, user) });
    return reply.page('security/index', { sections, confirmed: passwordConfirmed(app, request) });
  });
}
