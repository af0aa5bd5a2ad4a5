// Builds the application: shared plugins first, then the API, the pages and the panel.
// It never listens: server.ts does, and tests call app.inject().
import Fastify, { LogController, type FastifyInstance, type FastifyPluginAsync } from 'fastify';
import formbody from '@fastify/formbody';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import sjson from 'secure-json-parse';
import type { Config } from './config.js';
import { connect, type Db } from './db/connect.js';
import { adminRoutes } from './http/admin/index.js';
import { apiRoutes } from './http/api/index.js';
import { devMailRoutes } from './http/dev/mail.js';
import { feedRoutes } from './http/feeds/index.js';
import { healthRoutes } from './http/health.js';
import { mediaFileRoutes } from './http/media.js';
import { metricsRoutes } from './http/metrics.js';
import { validatorCompiler } from './http/shared/validation.js';
import { namePlugins } from './http/shared/plugin-names.js';
import { buildSerializer } from './http/shared/serialization.js';
import { webRoutes } from './http/web/index.js';
import { apiGuardPlugin } from './plugins/api-guard.js';
import { errorsPlugin, frameworkErrorHandler } from './plugins/errors.js';
import { httpCachePlugin } from './plugins/http-cache.js';
import { metricsPlugin } from './plugins/metrics.js';
import { rateLimitPlugin } from './plugins/rate-limit.js';
import { requestLogPlugin } from './plugins/request-log.js';
import { responseBatchPlugin } from './perf/response-batch.js';
import { requestLooksPlugin } from './perf/request-looks.js';
import { serverLimitOptions } from './plugins/server-limits.js';
import { shutdownPlugin } from './plugins/shutdown.js';
import { securityHeadersPlugin } from './plugins/security-headers.js';
import { cookiePlugin, sessionPlugin } from './plugins/session.js';
import { corsPlugin } from './plugins/cors.js';
import { csrfCookieRoutes, statefulPageHooks, statefulPlugin } from './plugins/stateful.js';
import { viewsPlugin } from './plugins/views.js';
import { openapiPlugin } from './plugins/openapi.js';
import { webGuards } from './plugins/web-guard.js';
import './plugins/types.js';
import { createServices } from './services.js';
import type { Mailer } from './modules/mail/mailer.js';
import { LogDestination } from './perf/log-destination.js';

// Display names for Fastify, which otherwise searches require.cache for each (http/shared/plugin-names.ts).
namePlugins({ healthRoutes, metricsRoutes, feedRoutes, mediaFileRoutes, apiRoutes, csrfCookieRoutes, webRoutes, adminRoutes, devMailRoutes });

export type BuildOptions = {
  /** An open database to use (tests); otherwise one is opened from config.databaseUrl. */
  db?: Db;
  /** Where log lines go (tests capture them); stdout otherwise. */
  loggerStream?: { write(line: string): void };
  /** The mail transport (tests); otherwise the one MAIL_MAILER names. */
  mailer?: Mailer;
  /** More routes inside the browser scope, with the session but no web guard (tests only). */
  browserRoutes?: FastifyPluginAsync;
};

/** Where the log lines go by default: stdout, in blocks (src/perf/log-destination.ts). */
function logDestination(config: Config): { stream: LogDestination; close(): Promise<void> } {
  // Worker processes share stdout: their blocks must never split each other's lines.
  const stream = new LogDestination({ fd: 1, shared: config.webConcurrency > 1 });
  // A process.exit() that skips app.close() still writes what it holds.
  const atExit = () => stream.flushAtExit();
  process.once('exit', atExit);
  return {
    stream,
    close: async () => {
      process.removeListener('exit', atExit);
      await stream.close();
    },
  };
}

export async function buildApp(config: Config, options: BuildOptions = {}): Promise<FastifyInstance> {
  const destination = options.loggerStream === undefined && config.logLevel !== 'silent' ? logDestination(config) : null;
  const app = Fastify({
    logger: { level: config.logLevel, stream: options.loggerStream ?? destination?.stream ?? process.stdout },
    // Fastify's own two lines per request are replaced by one of ours (plugins/request-log.ts).
    logController: new LogController({ disableRequestLogging: true }),
    bodyLimit: config.bodyLimit,
    // Slow clients and oversized headers are cut off (Fastify sets no request timeout by default).
    ...serverLimitOptions(config),
    // request.ip (limits, throttles, audit) comes from X-Forwarded-For only through the proxies
    // TRUSTED_PROXIES names (config.ts); by default the socket's address, whatever a client sends.
    trustProxy: config.trustedProxies,
    // Requests arriving while closing get our 503 envelope instead (plugins/shutdown.ts).
    return503OnClosing: false,
    forceCloseConnections: 'idle',
    ajv: { customOptions: { allErrors: true } },
    frameworkErrors: frameworkErrorHandler,
    // Every context compiles with ours: setValidatorCompiler alone is lost in a plugin that adds
    // shared schemas (Fastify rebuilds its validator from the default Ajv builder there). Fastify
    // types this factory with Ajv's own compile signature, hence the cast.
    // Response serializers are compiled once per schema in the process (http/shared/serialization.ts).
    schemaController: { compilersFactory: { buildValidator: (() => validatorCompiler) as never, buildSerializer: buildSerializer as never } },
  }).withTypeProvider<TypeBoxTypeProvider>();

  if (destination !== null) app.addHook('onClose', async () => destination.close());
  const db = options.db ?? connect(config.databaseUrl);
  app.decorate('config', config);
  app.decorate('db', db);
  app.decorate('services', createServices(db, config, { logger: app.log, mailer: options.mailer }));
  app.addHook('onClose', async () => app.services.close());
  if (options.db === undefined) app.addHook('onClose', async () => db.close());

  app.setValidatorCompiler(validatorCompiler);

  // JSON bodies: an empty body is "no body" (clients often send the header on DELETE), and the
  // two prototype-pollution shapes, a `__proto__` key anywhere and a `constructor` holding a
  // `prototype`, are a 400, so no later merge can turn them into an attack. Any other key named
  // like a member of Object.prototype (`constructor` with a string, `toString`, `valueOf`…) is
  // an own property of the parsed object and an unknown field like any other: the routes ignore
  // it (validation.ts), and maps keyed by input never consult Object.prototype.
  app.removeContentTypeParser('application/json');
  app.addContentTypeParser('application/json', { parseAs: 'string' }, (_request, body, done) => {
    const text = typeof body === 'string' ? body : body.toString('utf8');
    if (text.trim() === '') return done(null, undefined);
    try {
      done(null, sjson.parse(text, { protoAction: 'error', constructorAction: 'error' }));
    } catch {
      done(Object.assign(new Error('The request body is not valid JSON.'), { statusCode: 400, code: 'FST_ERR_CTP_INVALID_JSON_BODY' }), undefined);
    }
  });
  await app.register(formbody, { bodyLimit: config.bodyLimit });
  // A request without a body (none sent, or an empty or `null` JSON one) is read as an empty
  // object, on every route, before validation: an API client learns which fields are required
  // rather than that "the body must be an object", and a form action never meets `undefined`
  // where it reads a field.
  app.addHook('preValidation', (request, _reply, done) => {
    if (request.body === undefined || request.body === null) request.body = {};
    done();
  });
  await app.register(errorsPlugin);
  await app.register(shutdownPlugin);
  await app.register(securityHeadersPlugin);
  await app.register(requestLogPlugin);
  await app.register(metricsPlugin);
  // Responses finished in one event-loop turn are written together at its end.
  await app.register(responseBatchPlugin);
  // PostgreSQL: the kept reads of one request share one look at the change counters.
  await app.register(requestLooksPlugin);
  // Each plugin names the plugins and shared objects it needs (fastify-plugin's `dependencies`
  // and `decorators`): one registered before what it needs stops the start. The routes come
  // after every plugin whose onRoute hook reads them (guards, limits, the OpenAPI document).
  await app.register(apiGuardPlugin);
  await app.register(rateLimitPlugin);

  // First-party SPAs and CORS; cookies are parsed everywhere (the SPA check reads the session cookie).
  await app.register(corsPlugin);
  await app.register(cookiePlugin);
  await app.register(statefulPlugin);
  await app.register(viewsPlugin);
  // Who may keep an answer, as each route declares it (config.cache): ETag, 304, Cache-Control.
  await app.register(httpCachePlugin);

  await app.register(openapiPlugin);

  await app.register(healthRoutes);
  await app.register(metricsRoutes);
  // The feed, the sitemap and robots.txt: public documents, outside the session's scope.
  await app.register(feedRoutes);
  // The media library's images, as public files: no session either.
  await app.register(mediaFileRoutes);
  await app.register(apiRoutes, { prefix: '/api' });
  // Pages, the panel and the SPA's CSRF cookie: the session runs here only, and every route in
  // this scope declares a web guard. The SPA hook that renews the XSRF cookie is registered
  // before the session plugin: it must run before the session is saved.
  await app.register(async (browser) => {
    // A form is a set of fields: a body that is not one (a JSON array, string or number, an
    // empty text/plain post) is an empty form, so every required field is reported missing. The
    // schema's own error for it sits at the root and names no field, and the forms show field
    // errors only, so an empty text/plain post to /profile would pass and blank the user's name
    // and email. (The API keeps its 422 "The request body must be a JSON object.")
    browser.addHook('preValidation', (request, _reply, done) => {
      const body = request.body;
      if (typeof body !== 'object' || body === null || Array.isArray(body)) request.body = {};
      done();
    });
    await statefulPageHooks(browser);
    await browser.register(sessionPlugin);
    await browser.register(csrfCookieRoutes);
    // Test routes come before the guards: they set up state, they are not pages.
    if (options.browserRoutes !== undefined) await browser.register(options.browserRoutes);
    await webGuards(browser);
    await browser.register(webRoutes);
    await browser.register(adminRoutes, { prefix: '/admin' });
    // Development only, with the log mailer: its mails, readable (no route at all in production).
    await browser.register(devMailRoutes, { prefix: '/_dev/mail' });
  });

  return app;
}
