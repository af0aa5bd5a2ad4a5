// Cookies, server-side sessions (stored in the application database) and CSRF protection.
// Sessions are created only when something is stored in them (saveUninitialized: false), so API
// calls and anonymous page views leave no rows behind.
import { deriveKey } from '../modules/shared/keys.js';
import cookie from '@fastify/cookie';
import csrf from '@fastify/csrf-protection';
import session, { type SessionStore } from '@fastify/session';
import type { FastifyInstance } from 'fastify';
import fp from 'fastify-plugin';

export const SESSION_COOKIE = 'tessera_session';

declare module 'fastify' {
  interface Session {
    /** The user logged in on the site (browser guard). */
    userId?: number;
    /** The user logged in on the admin panel (its own guard). */
    adminUserId?: number;
    /** Where to go after login (the page first asked for). */
    intended?: string;
    /** One-request messages: status text and form errors with old input. */
    flash?: Record<string, unknown>;
    _csrf?: string;
  }
}

// Lives in modules/ so that services (signed links) derive keys without importing Fastify.
export { deriveKey } from '../modules/shared/keys.js';

export const sessionPlugin = fp(async (app: FastifyInstance) => {
  const secure = app.config.appUrl.startsWith('https:');
  await app.register(cookie, { secret: deriveKey(app.config.appKey, 'cookies').toString('hex') });
  await app.register(session, {
    secret: deriveKey(app.config.appKey, 'session').toString('hex'),
    cookieName: SESSION_COOKIE,
    // The store keeps the session's JSON form; @fastify/session rebuilds the Session from it.
    store: app.services.sessions as unknown as SessionStore,
    saveUninitialized: false,
    // The idle lifetime restarts with each request that uses the session.
    rolling: true,
    cookie: {
      path: '/',
      httpOnly: true,
      sameSite: 'lax',
      secure,
      maxAge: app.config.sessionLifetimeMinutes * 60_000,
    },
  });
  // Issues tokens (reply.generateCsrf); web-guard.ts checks them on every unsafe form action.
  await app.register(csrf, { sessionPlugin: '@fastify/session', logLevel: 'debug' });
});
