// Cookies, server-side sessions (stored in the application database) and CSRF protection.
// Sessions are created only when something is stored in them (saveUninitialized: false), so
// anonymous page views leave no rows behind.
//
// The session plugin runs on the pages and the panel only (the browser scope in app.ts). The
// JSON API never pays for it: @fastify/session builds and signs a session for every request it
// sees, which cost a third of the throughput of an authenticated API read. A first-party SPA's
// API request reads its session on demand with readSession().
import { createRequire } from 'node:module';
import type { FastifyReply, FastifyRequest, onRequestHookHandler, onSendHookHandler } from 'fastify';
import { deriveKey } from '../modules/shared/keys.js';
import cookie, { Signer } from '@fastify/cookie';
import { Tokens as CsrfTokens } from '@fastify/csrf';
import csrf from '@fastify/csrf-protection';
import session, { type FastifySessionOptions, type SessionStore } from '@fastify/session';
import type { Session } from 'fastify';
import type { FastifyInstance } from 'fastify';
import fp from 'fastify-plugin';
import type { Config } from '../config.js';
import type { StoredSession } from '../modules/sessions/session-store.js';

/** The session cookie's plain name; its name on the wire is cookieName(config, SESSION_COOKIE). */
export const SESSION_COOKIE = 'tessera_session';

/** The plain name of the CSRF secret cookie of a visitor without a session (a guest's forms). */
export const GUEST_CSRF_COOKIE = 'tessera_csrf';

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

type UnsignResult = ReturnType<Signer['unsign']>;

/**
 * The session cookie's signer: @fastify/cookie's, with the answers for the cookies browsers send
 * back kept. A signed-in request checked its cookie's HMAC and then computed the same HMAC again
 * to sign its id (@fastify/session rebuilds the Session from the store's data): each cookie is
 * now checked once, and its id's signature is the cookie itself. Only a cookie whose signature
 * held is kept, by its exact text, so a kept answer is one the HMAC gave; a guest's new id (a
 * new random value each request) is signed and not kept.
 */
class KeptSigner {
  private readonly ids = new Map<string, string>();
  private readonly cookies = new Map<string, string>();

  constructor(
    private readonly signer: Signer,
    private readonly maxEntries: number,
  ) {}

  sign(value: string): string {
    return this.cookies.get(value) ?? this.signer.sign(value);
  }

  unsign(input: string): UnsignResult {
    const kept = this.ids.get(input);
    if (kept !== undefined) return { valid: true, renew: false, value: kept };
    const result = this.signer.unsign(input);
    if (result.valid && !result.renew) {
      keep(this.ids, input, result.value, this.maxEntries);
      keep(this.cookies, result.value, input, this.maxEntries);
    }
    return result;
  }
}

// At most `max` entries, the oldest dropped first.
function keep(map: Map<string, string>, key: string, value: string, max: number): void {
  if (map.size >= max && !map.has(key)) map.delete(map.keys().next().value as string);
  map.set(key, value);
}

// One signer per app (its configuration object): the pages' session plugin and readSession share it.
const signers = new WeakMap<Config, KeptSigner>();
function sessionSigner(config: Config): KeptSigner {
  let signer = signers.get(config);
  if (signer === undefined) signers.set(config, (signer = new KeptSigner(new Signer(sessionSecret(config.appKey)), 10_000)));
  return signer;
}

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
  const unsigned = sessionSigner(app.config).unsign(raw);
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

// The token scheme @fastify/csrf-protection issues tokens with (reply.generateCsrf): a salted hash
// of the secret. web-guard.ts checks every unsafe form action's token against it.
export const csrfTokens = new CsrfTokens() as unknown as { secretSync(): string; create(secret: string): string; verify(secret: string, token: string): boolean };

// Where a request's session lives, and whether it is still to be made (sessionPlugin below): two
// fields every request of the browser scope has from its start, so that no request object
// changes shape (an accessor defined on each request object cost more than the session saved).
const SESSION = Symbol('session');
const NOT_STARTED = Symbol('session not started');
type LazyRequest = FastifyRequest & { [SESSION]: unknown; [NOT_STARTED]: boolean };

/**
 * Whether this request's session exists yet. A request without a session cookie gets its (new,
 * empty) session only when something reads `request.session`; code on every page's path (the
 * guard, the flash messages, a guest's form token) asks this first, so a visitor without a
 * session costs no session at all. Reading `request.session` is always allowed: it starts one.
 */
export function sessionStarted(request: FastifyRequest): boolean {
  return (request as LazyRequest)[NOT_STARTED] !== true;
}

/** Whether the request's session is stored, or will be when this answer is sent. */
function sessionKept(request: FastifyRequest): boolean {
  if (!sessionStarted(request)) return false;
  const session = request.session;
  const sent = request.cookies?.[cookieName(request.server.config, SESSION_COOKIE)];
  return (sent !== undefined && sent === session.encryptedSessionId) || session.isModified();
}

/** The secret of the guest CSRF cookie this request carries, if its signature holds. */
export function guestCsrfSecret(request: FastifyRequest): string | null {
  const raw = request.cookies?.[cookieName(request.server.config, GUEST_CSRF_COOKIE)];
  if (raw === undefined || raw === '') return null;
  const unsigned = request.unsignCookie(raw);
  return unsigned.valid && unsigned.value !== null && unsigned.value !== '' ? unsigned.value : null;
}

// The secret a guest's page has just put in a cookie, for its other forms (not sent back yet).
const guestSecrets = new WeakMap<FastifyRequest, string>();

/**
 * The CSRF token of a form on this page. A visitor with a session gets one of the session's
 * secret, as before. A visitor without one (a guest opening /login) gets one of a secret kept in
 * a signed cookie, as Django keeps it: a form shown to a guest then writes no session row (a row
 * per view of /login halved its throughput), and the check is the same: the token must come
 * from a secret this browser holds and no other site can read or, under __Host-, plant.
 */
export function formToken(request: FastifyRequest, reply: FastifyReply): string {
  if (sessionStarted(request) && (request.session._csrf !== undefined || sessionKept(request))) return reply.generateCsrf();
  let secret = guestCsrfSecret(request) ?? guestSecrets.get(request);
  if (secret === undefined || secret === null) {
    secret = csrfTokens.secretSync();
    guestSecrets.set(request, secret);
    const config = request.server.config;
    const scope = cookieScope(config);
    // As the session's cookie: a Secure cookie is not set on a request that came over http (an
    // https APP_URL behind a proxy not trusted), so the form answers 419 and says why (views.ts).
    if (!scope.secure || request.protocol === 'https') void reply.setCookie(cookieName(config, GUEST_CSRF_COOKIE), secret, { ...scope, httpOnly: true, sameSite: 'lax', signed: true });
  }
  return csrfTokens.create(secret);
}

/**
 * @fastify/session, with one change: a request that carries no session cookie gets its new session
 * when something first reads `request.session`, not as it arrives. @fastify/session makes one for
 * every request (a random id signed with an HMAC, and the session's JSON hashed twice to see
 * whether it changed): a fifth to a quarter of the instructions of an anonymous page (GET /: 255,000 → 180,000–200,000
 * a request, bench/instructions.ts), for a session that is then neither saved nor sent. The
 * library's own hooks do the work: its onRequest hook runs at once for a request with a session
 * cookie, or at the first read otherwise (it is synchronous then: no cookie, no store read); its
 * onSend hook runs for every request whose session was made, so a session made and changed is
 * saved and its cookie set exactly as before.
 */
async function registerLazily(app: FastifyInstance, options: FastifySessionOptions): Promise<void> {
  const hooks: { onRequest?: onRequestHookHandler; onSend?: onSendHookHandler } = {};
  const noop = () => undefined;
  // The plugin registers on `app` as it would through app.register(), except for its two hooks,
  // kept here and called by the hooks below, and its `request.session` field, which becomes an
  // accessor that makes the session at the first read.
  const capturing = new Proxy(app, {
    get(target, property, receiver) {
      if (property === 'addHook') {
        return (name: string, hook: onRequestHookHandler & onSendHookHandler) => {
          if ((name !== 'onRequest' && name !== 'onSend') || hooks[name] !== undefined) throw new Error(`@fastify/session added an unexpected ${name} hook: check registerLazily against its version.`);
          hooks[name] = hook;
          return receiver;
        };
      }
      if (property === 'decorateRequest') {
        return (name: string | symbol, value: unknown) => {
          if (name !== 'session') return target.decorateRequest(name, value as never);
          target.decorateRequest(SESSION, null);
          target.decorateRequest(NOT_STARTED, false);
          target.decorateRequest('session', {
            getter(this: LazyRequest) {
              if (this[NOT_STARTED]) {
                this[NOT_STARTED] = false;
                // Without a cookie the library's hook is synchronous: it sets request.session.
                void hooks.onRequest?.call(app, this, null as never, noop);
              }
              return this[SESSION];
            },
            setter(this: LazyRequest, session: unknown) {
              this[NOT_STARTED] = false;
              this[SESSION] = session;
            },
          } as never);
          return receiver;
        };
      }
      const value: unknown = Reflect.get(target, property, target);
      return typeof value === 'function' ? (value as (...args: unknown[]) => unknown).bind(target) : value;
    },
  });
  await new Promise<void>((resolve, reject) => session(capturing, options, (error?: Error) => (error ? reject(error) : resolve())));
  const { onRequest: begin, onSend: save } = hooks;
  if (begin === undefined || save === undefined) throw new Error('@fastify/session added no onRequest or onSend hook: check registerLazily against its version.');
  const cookie = options.cookieName ?? 'sessionId';

  app.addHook('onRequest', function (this: FastifyInstance, request, reply, done) {
    if (request.cookies?.[cookie] !== undefined) return begin.call(this, request, reply, done);
    (request as LazyRequest)[NOT_STARTED] = true;
    done();
  });
  app.addHook('onSend', function (this: FastifyInstance, request, reply, payload, done) {
    if ((request as LazyRequest)[NOT_STARTED]) return done(null, payload);
    return save.call(this, request, reply, payload, done);
  });
}

/**
 * @fastify/session tells whether a session changed by comparing a SHA-256 of its JSON (keys
 * sorted, the cookie left out), taken when the session is restored and again as the answer is
 * sent: two stringifications and two hashes on every request with a session, 28,000
 * instructions with the CSRF token's hash, a fourteenth of /dashboard. Here the text is compared
 * itself (JSON.stringify, the cookie left out the same way): equal texts are equal sessions, and
 * a session whose keys were written in another order only counts as changed (saved once more,
 * never lost). The library's method is found by its name; a version without it stops the start.
 */
function compareSessionsByText(): void {
  const { prototype } = createRequire(import.meta.url)('@fastify/session/lib/session.js') as { prototype: object };
  const hash = Object.getOwnPropertySymbols(prototype).find((symbol) => symbol.description === 'hash');
  if (hash === undefined || typeof (prototype as Record<symbol, unknown>)[hash] !== 'function') {
    throw new Error('@fastify/session has no [hash] method: check compareSessionsByText against its version.');
  }
  Object.defineProperty(prototype, hash, {
    value: function sessionText(this: { cookie?: unknown }): string {
      const { cookie: _cookie, ...data } = this;
      return JSON.stringify(data);
    },
  });
}

/** Server-side sessions and CSRF tokens: registered in the browser scope only. */
export const sessionPlugin = fp(async (app: FastifyInstance) => {
  compareSessionsByText();
  const store = app.services.sessions;
  const lifetimeMs = app.config.sessionLifetimeMinutes * 60_000;
  // The idle lifetime restarts with use, once per touch interval (session-store.ts): a session
  // used without a change is saved, and its cookie sent again with the new expiry, only when its
  // stored idle end is that far behind. Before the session plugin's own onSend, which then sends
  // the cookie of a session saved here; between touches an unchanged session is neither written
  // nor sent (@fastify/session's `rolling` would save it and set its cookie on every answer).
  app.addHook('onSend', async (request) => {
    if (!sessionStarted(request)) return;
    const session = request.session;
    const stored = (session?.cookie as { originalExpires?: Date } | undefined)?.originalExpires;
    if (!(stored instanceof Date) || Date.now() + lifetimeMs - stored.getTime() < store.touchIntervalMs) return;
    if (session.isModified()) return;
    await session.save();
  });
  await registerLazily(app, {
    secret: sessionSigner(app.config),
    cookieName: cookieName(app.config, SESSION_COOKIE),
    // The store keeps the session's JSON form; @fastify/session rebuilds the Session from it.
    store: {
      get: (sessionId, callback) => store.get(sessionId, callback as Parameters<typeof store.get>[1]),
      set: (sessionId, data, callback) => (unsaved.has(data) ? callback() : store.set(sessionId, data as StoredSession, callback)),
      destroy: (sessionId, callback) => store.destroy(sessionId, callback),
    } satisfies SessionStore,
    saveUninitialized: false,
    // A session is saved when it changes; its idle lifetime is moved by the hook above.
    rolling: false,
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
