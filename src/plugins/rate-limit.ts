// Rate limits under /api, on @fastify/rate-limit:
// - every /api route: API_RATE_LIMIT requests a minute per token (the id part of a well-formed
//   `Bearer <id>|…`, never the secret) or, without one, per client IP;
// (POST /api/tokens' LOGIN_RATE_LIMIT attempts a minute per email + IP are the sign-in
// pipeline's, modules/sign-in, as every way in counts its attempts there.)
// Answers are Laravel's: X-RateLimit-Limit/Remaining on every limited response; a 429 adds
// Retry-After (seconds) and X-RateLimit-Reset (Unix time), with the envelope "Too Many Attempts.".
// Counters live in memory (one process), Redis or the database (shared by every instance).
// When Redis or the database fails, the request limit lets requests through, except on the
// routes that check a password, which keep counting in this process (see below). Redis is asked
// through its client's breaker (modules/rate-limit/breaker.ts): after failures in a row it is
// skipped, without waiting, until a background probe finds it answering again.
import rateLimit, { normalizeIP } from '@fastify/rate-limit';
import type { FastifyInstance, FastifyRequest, onRequestHookHandler, onSendHookHandler } from 'fastify';
import fp from 'fastify-plugin';
import { breakerFor } from '../modules/rate-limit/breaker.js';
import { DatabaseRateLimitStore } from '../modules/rate-limit/database-store.js';
import { connectedOnce, rateLimitNamespace } from '../modules/rate-limit/redis.js';
import { fallbacksOf } from '../modules/rate-limit/store-state.js';
import { tooManyAttempts } from '../modules/rate-limit/too-many-attempts.js';

const WINDOW_MS = 60_000;
export { TOO_MANY_ATTEMPTS } from '../modules/rate-limit/too-many-attempts.js';

// The routes whose handler checks a password (a sign-in, the current password of a change).
const CREDENTIAL_ROUTES = new Set(['POST /api/tokens', 'PUT /api/user/password']);

type Check = Awaited<ReturnType<ReturnType<FastifyInstance['createRateLimit']>>>;
type Limiter = (request: FastifyRequest) => Promise<Check>;

function clientIp(request: FastifyRequest): string {
  return normalizeIP(request.ip);
}

/**
 * The bucket of an API request: the id of its well-formed bearer token (parsed by the API guard
 * before any limit, plugins/api-guard.ts; the secret is never part of a key), else its IP.
 */
export function apiBucket(request: FastifyRequest): string {
  const credentials = request.credentials;
  return credentials === null || credentials === 'invalid' ? `ip:${clientIp(request)}` : `token:${credentials.id}`;
}

function addRouteHook<T>(route: { [key: string]: unknown }, hook: 'onRequest' | 'onSend', handler: T): void {
  const current = route[hook];
  route[hook] = current === undefined ? [handler] : Array.isArray(current) ? [...current, handler] : [current, handler];
}

export const rateLimitPlugin = fp(async (app: FastifyInstance) => {
  const { config } = app;
  if (config.apiRateLimit === 0) return;

  // Deployments sharing a Redis keep apart by their APP_KEY; instances of one deployment share it.
  const nameSpace = rateLimitNamespace(config.appKey);
  // The services' client (one connection per process, shared with the account throttles), which
  // the app disconnects on close. Connected here at start so that an absent Redis is said at once.
  const redis = app.services.redis;
  if (redis !== null) {
    await connectedOnce(redis).catch((error: unknown) => app.log.warn({ err: error }, 'rate limit store: Redis unreachable'));
  }
  const { throttle } = app.services;
  const db = app.db;
  const store = config.rateLimitStore === 'database' ? class extends DatabaseRateLimitStore {
    constructor() {
      super(db);
    }
  } : undefined;

  await app.register(rateLimit, {
    global: false,
    max: config.apiRateLimit,
    timeWindow: WINDOW_MS,
    keyGenerator: apiBucket,
    cache: 10_000,
    nameSpace,
    ...(redis === null ? {} : { redis }),
    ...(store === undefined ? {} : { store }),
  });

  // A store that fails (Redis or the database away) lets the request through: the request limit
  // protects the service's capacity, it must not take the service down. One warning a minute says so.
  let lastWarning = 0;
  const allowed: Check = { isAllowed: true, key: '' };
  // Counted for GET /metrics with the throttles' own fallbacks, by the shared store's object.
  const fallbacks = fallbacksOf(redis ?? db);
  const storeFailed = (request: FastifyRequest, error: unknown): Check => {
    fallbacks.count += 1;
    if (Date.now() - lastWarning > WINDOW_MS) {
      lastWarning = Date.now();
      request.log.warn({ err: error }, 'rate limit store failed; request not limited');
    }
    return allowed;
  };
  // Redis's breaker: a limiter's call to Redis goes through it, and while it is open the call
  // fails at once into the fallbacks below. Its opening and closing are logged once each.
  const breaker = redis === null ? null : breakerFor(redis);
  if (breaker !== null) {
    const unsubscribe = breaker.onChange((state, previous) => {
      if (previous === 'closed') app.log.warn('rate limit store: Redis failing; skipped until it answers again, limits count in this process meanwhile');
      else if (state === 'closed') app.log.info('rate limit store: Redis answers again');
    });
    app.addHook('onClose', async () => void unsubscribe());
  }
  const viaBreaker = (limiter: Limiter): Limiter => (breaker === null ? limiter : (request) => breaker.run(() => limiter(request)));

  const guarded = (limiter: Limiter): Limiter => {
    const call = viaBreaker(limiter);
    return (request) => call(request).catch((error: unknown) => storeFailed(request, error));
  };

  // On a route that checks a password, letting requests through would give whoever can knock
  // Redis over unlimited guesses (a credential-stuffing run from one IP meets no per-email limit).
  // There the request limit counts through the account throttle instead, whose store falls back
  // to this process's memory (modules/throttle/fallback-store.ts, which also logs the one warning
  // a minute): still limited, per instance, until the shared store answers again.
  const counted = (limiter: Limiter): Limiter => {
    const call = viaBreaker(limiter);
    return (request) =>
      call(request).catch(async (): Promise<Check> => {
        const key = apiBucket(request);
        const { hits, resetAt } = await throttle.hit(`api|${key}`, WINDOW_MS / 1000);
        const max = config.apiRateLimit;
        const ttl = Math.max(0, resetAt - Date.now());
        const remaining = Math.max(0, max - hits);
        return { isAllowed: false, key, max, timeWindow: WINDOW_MS, remaining, ttl, ttlInSeconds: Math.ceil(ttl / 1000), isExceeded: hits > max, isBanned: false };
      });
  };

  const requests = app.createRateLimit();
  // Failed token authentications, per IP. Without it a client could send made-up token ids,
  // each with a fresh bucket, and never meet the per-IP limit.
  const badTokens = guarded(app.createRateLimit({ max: config.apiRateLimit, timeWindow: WINDOW_MS, keyGenerator: (request) => `bad-token:${clientIp(request)}` }));
  const blockedUntil = new Map<string, number>();

  // The hot path: callback-style hooks, one store call, no work beyond it for allowed requests.
  const limitHook =
    (api: Limiter): onRequestHookHandler =>
    (request, reply, done) => {
      api(request).then((check) => {
        if (check.isAllowed) return done();
        if (check.isExceeded) return done(tooManyAttempts(check.max, check.ttlInSeconds));
        if (blockedUntil.size > 0 && check.key.startsWith('token:')) {
          const until = blockedUntil.get(clientIp(request));
          if (until !== undefined && until > Date.now()) return done(tooManyAttempts(check.max, Math.ceil((until - Date.now()) / 1000)));
        }
        void reply.header('x-ratelimit-limit', check.max).header('x-ratelimit-remaining', check.remaining);
        done();
      }, done);
    };
  const apiLimit = limitHook(guarded(requests));
  const credentialApiLimit = limitHook(counted(requests));

  // Counted before the 401 is sent, so the next request already sees it (only refused tokens pay).
  const chargeBadToken = async (request: FastifyRequest): Promise<void> => {
    const check = await badTokens(request);
    // The IP is refused from the next request once it has used up its budget of failures.
    if (check.isAllowed || check.remaining > 0) return;
    if (blockedUntil.size > 10_000) {
      for (const [ip, until] of blockedUntil) if (until <= Date.now()) blockedUntil.delete(ip);
    }
    blockedUntil.set(clientIp(request), Date.now() + check.ttl);
  };
  const onRefusedToken: onSendHookHandler = (request, reply, payload, done) => {
    if (reply.statusCode !== 401 || !apiBucket(request).startsWith('token:')) return done(null, payload);
    chargeBadToken(request).then(() => done(null, payload), () => done(null, payload));
  };

  app.addHook('onRoute', (route) => {
    if (!route.url.startsWith('/api/') && route.url !== '/api') return;
    const methods = Array.isArray(route.method) ? route.method : [route.method];
    const credential = methods.some((method) => CREDENTIAL_ROUTES.has(`${method} ${route.url}`));
    addRouteHook(route as unknown as Record<string, unknown>, 'onRequest', credential ? credentialApiLimit : apiLimit);
    addRouteHook(route as unknown as Record<string, unknown>, 'onSend', onRefusedToken);
  });
}, { name: 'rate-limit', dependencies: ['api-guard'] });
