// The administration panel under /admin: its own login (admin-guest) and, behind the 'admin'
// guard (session.adminUserId + canAccessPanel on every request), one file per resource.
import type { FastifyInstance } from 'fastify';
import { auditRoutes } from './audit.js';
import { dashboardRoutes } from './dashboard.js';
import { loginRoutes } from './login.js';
import { mediaRoutes } from './media.js';
import { postRoutes } from './posts.js';
import { settingRoutes } from './settings.js';
import { tokenRoutes } from './tokens.js';
import { twoFactorRoutes } from './two-factor.js';
import { userRoutes } from './users.js';
import { namePlugins } from '../shared/plugin-names.js';

// Display names for Fastify, which otherwise searches require.cache for each (shared/plugin-names.ts).
namePlugins({ loginRoutes, dashboardRoutes, auditRoutes, userRoutes, postRoutes, mediaRoutes, settingRoutes, tokenRoutes, twoFactorRoutes });

export async function adminRoutes(app: FastifyInstance): Promise<void> {
  // Form fields are trimmed before validation (as Laravel's TrimStrings does), so "  " is an empty
  // name; passwords are taken exactly as typed.
  app.addHook('preValidation', async (request) => {
    const body = request.body;
    if (typeof body !== 'object' || body === null || Array.isArray(body)) return;
    for (const [key, value] of Object.entries(body as Record<string, unknown>)) {
      if (typeof value === 'string' && !key.includes('password')) (body as Record<string, unknown>)[key] = value.trim();
    }
  });
  app.addHook('onSend', async (_request, reply) => {
    void reply.header('x-robots-tag', 'noindex, nofollow');
  });

  await app.register(loginRoutes);
  await app.register(dashboardRoutes);
  await app.register(auditRoutes);
  await app.register(userRoutes);
  await app.register(postRoutes);
  await app.register(mediaRoutes);
  await app.register(settingRoutes);
  await app.register(tokenRoutes);
  await app.register(twoFactorRoutes);
}
