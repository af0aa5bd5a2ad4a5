// Cookies, server-side sessions (stored in the application database) and CSRF protection.
// Sessions are created only when something is stored in them (saveUninitialized: false), so
// anonymous page views leave no rows behind.
//
// The session plugin runs on the pages and the panel only (the browser scope in app.ts). The
// JSON API never pays for it: @fastify/session builds and signs a session for every request it
// sees, which cost a third of the throughput of an authenticated API read. A first-party SPA's
// API request reads its session on demand with readSession().
import type { FastifyRequest } from 'fastify';
import { deriveKey } from '../modules/shared/keys.js';
import cookie, { Signer } from '@fastify/cookie';
import csrf from '@fastify/csrf-protection';
import session, { type SessionStore } from '@fastify/session';
import type { Session } from 'fastify';
import type { FastifyInstance } from 'fastify';
import fp from 'fastify-plugin';
import type { Config } from '../config.js';
import type { StoredSession } from '../modules/sessions/session-store.js';

/** The session cookie's plain name; its name on the wire is cookieName(config, SESSION_COOKIE). */
export const SESSION_COOKIE = 'tessera_session';

type CookieConfig = Pick<Config, 'env' | 'appUrl' | 'sessionDomain'>;

/**
 * The name of the session or remember-me cookie. In production over https it takes the
 * `__Host-` prefix: browsers then keep it only when it is Secure, Path=/ and has no Domain, so
 * neither a sibling subdomain nor a plain-http page can plant or overwrite it (session fixation
 * by cookie tossing). SESSION_DOMAIN needs a Domain, which the prefix forbids: plain name then.
 */
export function cookieName(config: CookieConfig, plain: string): string {
  const hostOnly = config.env === 'production' && config.appUrl.startsWith('https:') && config.sessionDomain === null;
  return hostOnly ? `__Host-${plain}` : plain;
}

/** Where the session and remember-me cookies apply: the whole site, Secure over https, SESSION_DOMAIN's Domain if set. */
export function cookieScope(config: CookieConfig): { path: '/'; secure: boolean; domain?: string } {
  const scope = { path: '/' as const, secure: config.appUrl.startsWith('https:') };
  return config.sessionDomain === null ? scope : { ...scope, domain: config.sessionDomain };
}

// Lives in modules/ so that services (signed links) derive keys without importing Fastify.
export { deriveKey } from '../modules/shared/keys.js';

/** Cookie parsing and signing, for every route (the SPA check reads the session cookie). */
export const cookiePlugin = fp(async (app: FastifyInstance) => {
  await app.register(cookie, { secret: deriveKey(app.config.appKey, 'cookies').toString('hex') });
}, { name: 'cookie', decorators: { fastify: ['config'] } });

const sessionSecret = (appKey: Buffer): string => deriveKey(appKey, 'session').toString('hex');

/** A session's stored data, as the store returns it. */
export type StoredSessionData = Partial<Pick<Session, 'userId' | 'adminUserId' | '_csrf'>>;

/**
 * The session of a request outside the browser scope (a first-party SPA calling /api): the
 * signed cookie is checked with the session plugin's own signer, then the row is read. Null when
 * there is no cookie, its signature is wrong, or the session has ended.
 */
export async function readSession(app: FastifyInstance, request: FastifyRequest): Promise<StoredSessionData | null> {
  const raw = request.cookies?.[cookieName(app.config, SESSION_COOKIE)];
  if (raw === undefined || raw === '') return null;
  const unsigned = new Signer(sessionSecret(app.config.appKey)).unsign(raw);
  if (!unsigned.valid || unsigned.value === null) return null;
  const sessionId = unsigned.value;
  return new Promise((resolve) => {
    app.services.sessions.get(sessionId, (error, data) => resolve(error || data == null ? null : (data as StoredSessionData)));
  });
}

// The sessions of requests that failed: their answer does not save them (errors.ts).
const unsaved = new WeakSet<object>();

/**
 * The session of this request is not saved when its answer is sent. The error handler calls it
 * for a request that failed: @fastify/session saves as the answer goes out, so when that save is
 * what failed, the error page's answer would run it again, fail again, and leave the answer to
 * Fastify's last-resort handler, which shows the database's own error.
 */
export function leaveSessionUnsaved(request: FastifyRequest): void {
  const current: unknown = request.session;
  if (typeof current === 'object' && current !== null) unsaved.add(current);
}

/** Server-side sessions and CSRF tokens: registered in the browser scope only. */
export const sessionPlugin = fp(async (app: FastifyInstance) => {
  const store = app.services.sessions;
  await app.register(session, {
    secret: sessionSecret(app.config.appKey),
    cookieName: cookieName(app.config, SESSION_COOKIE),
    // The store keeps the session's JSON form; @fastify/session rebuilds the Session from it.
    store: {
      get: (sessionId, callback) => store.get(sessionId, callback as Parameters<typeof store.get>[1]),
      set: (sessionId, data, callback) => (unsaved.has(data) ? callback() : store.set(sessionId, data as StoredSession, callback)),
      destroy: (sessionId, callback) => store.destroy(sessionId, callback),
    } satisfies SessionStore,
    saveUninitialized: false,
    // The idle lifetime restarts with each request that uses the session.
    rolling: true,
    cookie: {
      ...cookieScope(app.config),
      httpOnly: true,
      sameSite: 'lax',
      maxAge: app.config.sessionLifetimeMinutes * 60_000,
    },
  });
  // Issues tokens (reply.generateCsrf); web-guard.ts checks them on every unsafe form action.
  await app.register(csrf, { sessionPlugin: '@fastify/session', logLevel: 'debug' });
}, { name: 'session', dependencies: ['cookie'], decorators: { fastify: ['config', 'services'] } });
