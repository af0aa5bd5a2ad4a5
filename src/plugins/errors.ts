// The one error handler. Under /api every failure is the JSON envelope {message, errors},
// whatever the Accept header; 5xx messages are generic and carry no stack. Browser routes get
// a small page (the web layer may replace `renderErrorPage`). A failure is logged once: the
// same failure again is counted (lib/failure-log.ts), so an outage writes a few lines, not one
// with a stack per request.
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import fp from 'fastify-plugin';
import FindMyWay, { type HTTPMethod } from 'find-my-way';
import type { ErrorObject } from 'ajv';
import { isDatabaseUnavailable, isDatabaseUnwritable } from '../db/errors.js';
import { failureKind, logOutagesTo, OUTAGE_INTERVAL_MS, outageLogOf } from '../db/outage-log.js';
import { writeProbeOf } from '../db/write-probe.js';
import { FailureLog } from '../lib/failure-log.js';
import { AppError, ValidationError, type FieldErrors } from '../modules/shared/errors.js';
import { t } from '../modules/i18n/translator.js';
import type { ErrorBody } from '../http/shared/schemas.js';
import { formatValidationErrors } from '../http/shared/validation.js';
import { leaveSessionUnsaved } from './session.js';
import { localeOf } from './views.js';
import type { ErrorPageRenderer } from './types.js';
import { wantsJson } from './web-guard.js';

const GENERIC: Record<number, string> = {
  400: 'The request could not be understood.',
  401: 'Unauthenticated.',
  403: 'This action is unauthorized.',
  404: 'Not Found.',
  405: 'Method Not Allowed.',
  408: 'Request Timeout.',
  413: 'The request body is too large.',
  // Fastify's own text of a 414 (a path parameter over its length limit) repeats the whole URL.
  414: 'URI Too Long.',
  415: 'Unsupported Media Type.',
  419: 'CSRF token mismatch.',
  429: 'Too Many Attempts.',
  500: 'Server Error.',
  503: 'Service Unavailable.',
};

/** A write refused for want of space (or by a disk gone read-only): what the visitor can do about it. */
export const UNWRITABLE_MESSAGE = 'The service cannot save changes at the moment. Please try again in a few minutes.';

// Retry-After on a 503 from the database: a server restarting is back within seconds; a full
// disk waits for an operator.
const RETRY_UNAVAILABLE_SECONDS = '5';
const RETRY_UNWRITABLE_SECONDS = '60';

export function isApiRequest(request: FastifyRequest): boolean {
  const path = request.url;
  return path === '/api' || path.startsWith('/api/') || path.startsWith('/api?') || path.startsWith('/sanctum/');
}

type Described = { status: number; body: ErrorBody; headers: Record<string, string> };

/**
 * Maps any thrown value to a status, a safe message and field errors. It never throws: an
 * error handler that throws makes Fastify answer its own 500, whose text carries the internal
 * failure ("Failed to serialize an error… list.includes is not a function"). What could
 * not be described is a generic 500, and the reason is logged.
 */
export function describeError(error: unknown, log?: FastifyRequest['log'], locale = 'en'): Described {
  try {
    return describe(error, locale);
  } catch (failure) {
    log?.error({ err: failure }, 'the error handler could not describe an error');
    return { status: 500, body: { message: GENERIC[500]!, errors: {} }, headers: {} };
  }
}

/**
 * An API message in `locale`. The API's messages are its English texts (the specification's
 * exact words); another language finds each under that very text in its locale files, as
 * Laravel's lang/fr.json does, and a text it does not have stays in English. English is
 * returned untouched, so it can never change.
 */
function sentence(locale: string, text: string): string {
  return locale === 'en' ? text : t(locale, text);
}

function fieldsIn(locale: string, errors: FieldErrors): FieldErrors {
  if (locale === 'en') return errors;
  return Object.fromEntries(Object.entries(errors).map(([field, messages]) => [field, messages.map((message) => sentence(locale, message))]));
}

function describe(error: unknown, locale: string): Described {
  if (error instanceof AppError) {
    // A 422 built from message keys is translated from its keys; written texts by their text.
    const errors = fieldsIn(locale, error instanceof ValidationError && locale !== 'en' ? error.errorsIn(locale) : error.errors);
    const first = error instanceof ValidationError ? Object.values(errors).find((messages) => messages.length > 0)?.[0] : undefined;
    return { status: error.status, body: { message: first ?? sentence(locale, error.message), errors }, headers: error.headers };
  }
  const e = error as FastifyError & { validation?: ErrorObject[] };
  if (Array.isArray(e.validation)) {
    return { status: 422, body: formatValidationErrors(e.validation, locale), headers: {} };
  }
  if (isDatabaseUnavailable(error)) return { status: 503, body: { message: sentence(locale, GENERIC[503]!), errors: {} }, headers: { 'retry-after': RETRY_UNAVAILABLE_SECONDS } };
  if (isDatabaseUnwritable(error)) return { status: 503, body: { message: sentence(locale, UNWRITABLE_MESSAGE), errors: {} }, headers: { 'retry-after': RETRY_UNWRITABLE_SECONDS } };
  const status = typeof e.statusCode === 'number' && e.statusCode >= 400 && e.statusCode < 600 ? e.statusCode : 500;
  if (status === 400 && e.code === 'FST_ERR_CTP_INVALID_JSON_BODY') {
    return { status, body: { message: sentence(locale, 'The request body is not valid JSON.'), errors: {} }, headers: {} };
  }
  // A 4xx from Fastify or a plugin keeps its own (safe) text only when we have none of ours.
  const message = GENERIC[status] ?? (status < 500 ? e.message : GENERIC[500]!);
  return { status, body: { message: sentence(locale, message), errors: {} }, headers: {} };
}

/**
 * The language of an API error: the visitor's, found as pages find it (the locale cookie, then
 * Accept-Language), English by default. Asked only when an error is answered: a successful API
 * request never reads a header for it.
 */
export function apiLocale(request: FastifyRequest): string {
  return localeOf(request, 'en');
}

/** Marks an API error as depending on the language asked for, so a shared cache (a 404 may be kept) never serves one language's to another. */
function varyOnLanguage(reply: FastifyReply): void {
  const current = reply.getHeader('vary');
  const listed = current === undefined ? [] : String(current).split(',').map((name) => name.trim()).filter((name) => name !== '');
  if (!listed.some((name) => name === '*' || name.toLowerCase() === 'accept-language')) void reply.header('vary', [...listed, 'Accept-Language'].join(', '));
}

/**
 * Fastify's own early failures (a URL whose percent-encoding does not decode, a path parameter
 * over its length limit), which skip the error handler: answered with the envelope under /api
 * and to a page's script (as the site's other errors are), and a plain page elsewhere (the
 * reply has no views yet: it comes before routing).
 */
export function frameworkErrorHandler(error: FastifyError, request: FastifyRequest, reply: FastifyReply): void {
  const api = isApiRequest(request);
  const { status, body } = describeError(error, request.log, api ? apiLocale(request) : 'en');
  if (api) varyOnLanguage(reply);
  if (api || wantsJson(request)) void reply.code(status).send(body);
  else void reply.code(status).type('text/plain; charset=utf-8').send(body.message);
}

export const errorsPlugin = fp(async (app: FastifyInstance) => {
  // The database's failures (here, in the pool, in dropped bookkeeping writes) share one log,
  // which says once when the database is back; any other failure is counted by its kind and route.
  logOutagesTo(app.db, app.log);
  const outages = outageLogOf(app.db);
  const failures = new FailureLog(app.log, { intervalMs: OUTAGE_INTERVAL_MS });
  const probe = writeProbeOf(app.db);
  app.addHook('onClose', async () => {
    failures.close();
    outages.close();
  });
  // A pooled connection that loses its server (PostgreSQL stopped, the network cut) says so once.
  app.db.pool?.on('error', (error) => outages.failed(`pool|${failureKind(error)}`, 'database connection lost', {}, error));

  app.decorate<ErrorPageRenderer>('renderErrorPage', (_request, reply, status, body) =>
    reply.code(status).type('text/plain; charset=utf-8').send(body.message),
  );

  // A second router knows every registered path, so an unknown method on a known path is a 405
  // with an Allow header, not a 404.
  const known = FindMyWay({ ignoreTrailingSlash: true });
  const methods = new Map<string, Set<string>>();
  app.addHook('onRoute', (route) => {
    const list = Array.isArray(route.method) ? route.method : [route.method];
    for (const method of list) {
      if (method === 'HEAD' || method === 'OPTIONS') continue;
      try {
        known.on(method as HTTPMethod, route.url, () => undefined, { url: route.url });
      } catch {
        // the same method and path registered twice (e.g. with constraints): already known
      }
      const set = methods.get(route.url) ?? new Set<string>();
      set.add(method);
      methods.set(route.url, set);
    }
  });

  const allowedFor = (url: string): string[] => {
    const path = url.split('?')[0] ?? url;
    const found = new Set<string>();
    for (const method of ['GET', 'POST', 'PUT', 'PATCH', 'DELETE'] as const) {
      const match = known.find(method, path);
      if (match !== null) found.add(method);
    }
    return [...found];
  };

  app.setNotFoundHandler((request, reply) => {
    const allowed = allowedFor(request.url);
    // A route of this very method that found nothing (a missing file under /assets, a handler
    // calling callNotFound) is a 404: the method is allowed, the thing is not there.
    const method = request.method === 'HEAD' ? 'GET' : request.method;
    const status = allowed.length > 0 && !allowed.includes(method) ? 405 : 404;
    if (status === 405) void reply.header('allow', allowed.join(', '));
    if (isApiRequest(request)) {
      varyOnLanguage(reply);
      return reply.code(status).send({ message: sentence(apiLocale(request), GENERIC[status]!), errors: {} } satisfies ErrorBody);
    }
    return app.renderErrorPage(request, reply, status, { message: GENERIC[status]!, errors: {} });
  });

  app.setErrorHandler((error, request, reply) => {
    const api = isApiRequest(request);
    const { status, body, headers } = describeError(error, request.log, api ? apiLocale(request) : 'en');
    if (status >= 500) {
      const path = request.routeOptions.url ?? '(unmatched)';
      const database = isDatabaseUnavailable(error) || isDatabaseUnwritable(error);
      // /up says so at once, before its next probe.
      if (isDatabaseUnwritable(error)) probe.failed();
      if (database) outages.failed(`request|${failureKind(error)}`, 'request failed', { path, reqId: request.id }, error);
      else failures.failed(`request|${failureKind(error)}|${path}`, 'request failed', { path, reqId: request.id }, error);
      // A failed request leaves its session as it was. Above all when saving it is what failed
      // (the session is saved as the answer is sent): the error page's own answer would try the
      // same save, fail again, and Fastify's last-resort handler would answer with the
      // database's own words (SQLITE_FULL, ECONNREFUSED and its address).
      leaveSessionUnsaved(request);
    }
    void reply.headers(headers);
    if (api) {
      varyOnLanguage(reply);
      return reply.code(status).send(body);
    }
    return app.renderErrorPage(request, reply, status, body);
  });
}, { name: 'errors', decorators: { fastify: ['config'] } });
