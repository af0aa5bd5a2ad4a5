// The self-documenting API: an OpenAPI 3.1 document built by @fastify/swagger from the very
// TypeBox schemas the routes validate and serialize with (never written by hand), served at
// GET /api/openapi.json, and the Swagger UI reference page at /docs from the local package.
// Must be registered before the API routes: the document is collected from onRoute.
import { readFileSync } from 'node:fs';
import swagger from '@fastify/swagger';
import swaggerUi from '@fastify/swagger-ui';
import { Type, type TSchema } from '@sinclair/typebox';
import type { FastifyInstance, FastifySchema, RouteOptions } from 'fastify';
import fp from 'fastify-plugin';
import { ErrorEnvelope, errorResponses, type ErrorBody } from '../http/shared/schemas.js';
import type { ErrorObject } from 'ajv';
import { formatValidationErrors, validatorCompiler } from '../http/shared/validation.js';
import { t, type Locale } from '../modules/i18n/translator.js';
import { SESSION_COOKIE, cookieName } from './session.js';
import { localeOf } from './views.js';
import type { RouteAuth } from './types.js';

export const OPENAPI_PATH = '/api/openapi.json';
export const DOCS_PREFIX = '/docs';

const UNSAFE = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);

const packageJson = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { version?: string; license?: string };
const packageVersion = packageJson.version ?? '0.0.0';
// The package's licence (an SPDX identifier) when it states one; it states none, being private:
// no right to the code is granted, which the document says (with SPDX's form for a licence of
// one's own) rather than leave the field out.
const license =
  packageJson.license === undefined || packageJson.license === 'UNLICENSED'
    ? { name: 'Proprietary: no licence is granted', identifier: 'LicenseRef-Proprietary' }
    : { name: packageJson.license, identifier: packageJson.license };

/** Which paths the document describes: the JSON API, the SPA's CSRF-cookie endpoint and the health check. */
export function isDocumentedPath(url: string): boolean {
  return url.startsWith('/api/') || url.startsWith('/sanctum/') || url === '/up';
}

// /docs in dark mode: a stylesheet of our own, served by Swagger UI's plugin under /docs/theme/
// (a file from this app, so the CSP's style-src 'self' allows it); it applies only under
// prefers-color-scheme: dark.
const docsDarkCss = readFileSync(new URL('../../public/docs-dark.css', import.meta.url), 'utf8');

/** The Swagger UI page with a link back to the site first in its body, in the visitor's language. */
function withSiteLink(page: string, locale: Locale): string {
  const nav = `<nav class="docs-site-nav" lang="${locale}" aria-label="${t(locale, 'navigation.docs_nav')}"><a href="/">${t(locale, 'navigation.docs_back')}</a></nav>`;
  return page.replace(/<body>/, `<body>\n      ${nav}`);
}

type Methods = RouteOptions['method'];

function methodList(method: Methods): string[] {
  return (Array.isArray(method) ? method : [method]).map((m) => String(m).toUpperCase());
}

function apiAuth(route: { config?: unknown }): RouteAuth | undefined {
  return (route.config as { auth?: RouteAuth } | undefined)?.auth;
}

/**
 * The error statuses the plumbing (not the handler) can answer with, from what the route declares:
 * its input schemas, its guard and its method. Handlers declare their own (404, a 401 on bad
 * credentials) in the route's `response`; these are added so that none is ever left out.
 */
export function plumbingStatuses(schema: FastifySchema, auth: RouteAuth | undefined, methods: string[], url: string): number[] {
  const statuses: number[] = [];
  if (schema.body !== undefined) statuses.push(400, 413, 415, 422);
  if (schema.querystring !== undefined || schema.params !== undefined) statuses.push(422);
  const authenticated = auth !== undefined && auth !== 'public';
  if (authenticated) statuses.push(401);
  if (typeof auth === 'object') statuses.push(403);
  // Cookie-authenticated (first-party SPA) writes need the X-XSRF-TOKEN header.
  if (authenticated && methods.some((m) => UNSAFE.has(m))) statuses.push(419);
  // Everything that reads the database answers 503 while it is down; the document itself does not.
  if (url !== OPENAPI_PATH) statuses.push(503);
  return statuses;
}

// Every operation says who may call it, as the guard does: a public one none (`[]`, which also
// satisfies linters asking that security be defined everywhere), a token route a bearer token or
// the SPA session, and an 'optional-token' route either or nothing (`{}` first). Swagger UI draws
// a lock on that last kind too; the description says no credential is needed, and a generated
// client must know it may send one (else it would never send the token that shows drafts).
function securityFor(auth: RouteAuth | undefined): Record<string, string[]>[] {
  if (auth === 'token' || typeof auth === 'object') return [{ bearer: [] }, { session: [] }];
  if (auth === 'optional-token') return [{}, { bearer: [] }, { session: [] }];
  return [];
}

const OPTIONAL_TOKEN_NOTE = 'No credential is needed. A token (or the SPA session), when sent, is checked (401 if invalid) and unlocks what this description reserves to it.';
const abilityNote = (ability: string): string =>
  `Needs the \`${ability}\` ability (a token made with \`*\`, as POST /api/tokens issues, and a first-party SPA session have every ability; 403 otherwise).`;

// A conditional read (a route declaring config.cache, plugins/http-cache.ts): the request header
// and the answer without a body.
const IfNoneMatch = Type.Object({
  'If-None-Match': Type.Optional(Type.String({ description: 'The `ETag` of a copy the client holds: 304 without a body while it still matches.', examples: ['W/"1f-2x8s0bQ"'] })),
});
const NotModified = Type.Null({ description: 'Not modified: the copy whose ETag was sent in If-None-Match is still current. No body, no Content-Type.' });

// Every API route reads HTML-form bodies too (@fastify/formbody, as Laravel does), but a form
// carries only text and bodies are validated strictly (a number is not a string): the form type
// is declared where every field is text, so that what is declared is what works.
const FORM = 'application/x-www-form-urlencoded';
function bodyTypes(body: TSchema): string[] {
  const properties = Object.values((body.properties ?? {}) as Record<string, TSchema>);
  return properties.every((property) => property.type === 'string') ? ['application/json', FORM] : ['application/json'];
}

const SUCCESS_TEXT: Record<string, string> = { 200: 'OK.', 201: 'Created.', 204: 'No content.' };

/** `DELETE /api/tokens/current` → `deleteTokensCurrent`, `GET /api/posts/:slug` → `getPostsBySlug`. */
export function operationId(method: string, url: string): string {
  const words = url
    .replace(/^\/(api|sanctum)\//, '/')
    .split(/[/.-]/)
    .filter((part) => part !== '')
    .map((part) => (part.startsWith(':') ? `by-${part.slice(1)}` : part))
    .flatMap((part) => part.split('-'));
  return [method.toLowerCase(), ...words.map((w) => w.charAt(0).toUpperCase() + w.slice(1))].join('');
}

function optionalDefaults(schema: TSchema): TSchema {
  const properties = (schema.properties ?? {}) as Record<string, TSchema>;
  const required = Array.isArray(schema.required) ? (schema.required as string[]) : [];
  return { ...schema, required: required.filter((name) => properties[name]?.default === undefined) };
}

/**
 * A response that is a reference to a shared schema keeps its example beside it, in the media
 * object (@fastify/swagger would drop it with the reference's other siblings).
 */
function exampleOfReference(schema: TSchema): TSchema {
  const { $ref, examples, description, headers } = schema as { $ref?: string; examples?: unknown[]; description?: string; headers?: unknown };
  if ($ref === undefined || examples?.length !== 1) return schema;
  return { description, ...(headers === undefined ? {} : { headers }), content: { 'application/json': { schema: { $ref }, example: examples[0] } } } as unknown as TSchema;
}

/**
 * A union of string literals (TypeBox's shape for a choice, which types the handlers' input) is
 * documented as the enum it means: Swagger UI lists its values, a generator makes a string union.
 */
function literalUnionsAsEnums(schema: TSchema): TSchema {
  const branches = schema.anyOf as TSchema[] | undefined;
  if (Array.isArray(branches) && branches.length > 0 && branches.every((b) => typeof b.const === 'string')) {
    const { anyOf: _anyOf, ...rest } = schema;
    return { ...rest, type: 'string', enum: branches.map((b) => b.const as string) } as TSchema;
  }
  if (schema.properties === undefined) return schema;
  const properties = Object.fromEntries(Object.entries(schema.properties as Record<string, TSchema>).map(([name, property]) => [name, literalUnionsAsEnums(property)]));
  return { ...schema, properties } as TSchema;
}

// Each error answer's example: the envelope the service really sends with that status (the
// messages of plugins/errors.ts, the guards and the rate limit), a 422 as the route's own
// validation answers, so that every operation, a body-less 204 one too, shows what a failure looks
// like. (The SPA steps give their own, in http/web/spa-contract.ts; /up documents its 503.)
const ERROR_MESSAGES: Record<number, string> = {
  400: 'The request body is not valid JSON.',
  401: 'Unauthenticated.',
  403: 'This action is unauthorized.',
  404: 'Not Found.',
  405: 'Method Not Allowed.',
  413: 'The request body is too large.',
  415: 'Unsupported Media Type.',
  419: 'CSRF token mismatch.',
  429: 'Too Many Attempts.',
  500: 'Server Error.',
  503: 'Service Unavailable.',
};

/**
 * A 422 as the route's own validation words it (shared/validation.ts runs the input schema): the
 * body sent empty, else the first field of the body, query or path that a wrong value fails.
 */
function fieldError(schema: FastifySchema, method: string, url: string): ErrorBody {
  const parts = [
    ['body', schema.body],
    ['querystring', schema.querystring],
    ['params', schema.params],
  ] as const;
  for (const [httpPart, input] of parts) {
    if (input === undefined) continue;
    let validate: ((data: unknown) => boolean) & { errors?: ErrorObject[] | null };
    try {
      validate = validatorCompiler({ schema: input, httpPart, method, url }) as typeof validate;
    } catch {
      continue; // a schema this compiler cannot take alone: the generic example below
    }
    const refused = (data: Record<string, unknown>): ErrorBody | undefined => (validate(data) ? undefined : formatValidationErrors(validate.errors ?? []));
    const empty = httpPart === 'body' ? refused({}) : undefined;
    if (empty !== undefined) return empty;
    for (const name of Object.keys(((input as TSchema).properties ?? {}) as Record<string, TSchema>)) {
      for (const wrong of ['%', '', -1]) {
        const answer = refused({ [name]: wrong });
        if (answer !== undefined) return answer;
      }
    }
  }
  return { message: 'The given data was invalid.', errors: {} };
}

function errorExample(status: number, schema: FastifySchema, auth: RouteAuth | undefined, method: string, url: string): ErrorBody {
  if (status === 422) return fieldError(schema, method, url);
  // A public route's 401 is its handler's: the sign-in of POST /api/tokens.
  if (status === 401 && (auth === undefined || auth === 'public')) return { message: 'The provided credentials are incorrect.', errors: {} };
  return { message: ERROR_MESSAGES[status] ?? 'Server Error.', errors: {} };
}

/** An error answer (a reference to the envelope) without an example gets the service's own. */
function withErrorExample(response: TSchema, status: number, schema: FastifySchema, auth: RouteAuth | undefined, method: string, url: string): TSchema {
  const { $ref, examples } = response as { $ref?: string; examples?: unknown[] };
  if (status < 400 || $ref !== ErrorEnvelope.$id || examples !== undefined) return response;
  return { ...response, examples: [errorExample(status, schema, auth, method, url)] } as TSchema;
}

type Transform = (input: { schema: FastifySchema; url: string; route: RouteOptions }) => { schema: FastifySchema; url: string };

/** Whether a browser route is one a first-party SPA calls with JSON (config.spa): documented too. */
function isSpaRoute(route: RouteOptions): boolean {
  return (route.config as { spa?: boolean } | undefined)?.spa === true;
}

// The SPA's writes on browser routes, a guest's sign-in steps included, carry the CSRF token as a
// header (an HTML form sends it as `_token`). Documented only: a header schema on the route would
// have Fastify validate it on the forms too. A parameter and not a security scheme: a missing one
// is the service's 419, which a validating proxy must get to see (it answers a missing scheme itself).
const XsrfHeader = Type.Object({
  'X-XSRF-TOKEN': Type.String({
    description: 'The URL-decoded value of the XSRF-TOKEN cookie set by GET /sanctum/csrf-cookie (419 when missing or wrong).',
    examples: ['bJ6Xq0Zk-2Vd0sWZy1p9uYl0bH5c8dH3k9q1Qw'],
  }),
});

/** Hides every route outside the API and completes the others from their guard declaration. */
const transform: Transform = ({ schema, url, route }) => {
  const spa = isSpaRoute(route);
  if (!(isDocumentedPath(url) || spa) || (schema as { hide?: boolean } | undefined)?.hide === true) {
    return { schema: { ...schema, hide: true } as FastifySchema, url };
  }
  const auth = apiAuth(route);
  const methods = methodList(route.method);
  const declared = (schema.response ?? {}) as Record<string, TSchema>;
  // The health check is outside /api: no rate limit, no error envelope; it documents its own answers.
  // So do the SPA's browser routes (src/http/web/spa-contract.ts): their guards are the pages'.
  const derived = url === '/up' || spa ? {} : errorResponses(...plumbingStatuses(schema, auth, methods, url));
  const response: Record<string, TSchema> = { ...declared };
  for (const [status, envelope] of Object.entries(derived)) {
    if (response[status] === undefined) response[status] = envelope;
  }
  for (const [status, success] of Object.entries(response)) {
    if (success.description === undefined && SUCCESS_TEXT[status] !== undefined) response[status] = { ...success, description: SUCCESS_TEXT[status] };
    response[status] = exampleOfReference(withErrorExample(response[status]!, Number(status), schema, auth, methods[0] ?? 'GET', url));
  }
  const out: FastifySchema & { security?: unknown; description?: string; operationId?: string; consumes?: readonly string[]; 'x-abilities'?: string[] } = { ...schema, response };
  out.operationId ??= operationId(methods[0] ?? 'GET', url);
  // A query parameter with a default is optional for the client, though required after validation.
  if (schema.querystring !== undefined) out.querystring = literalUnionsAsEnums(optionalDefaults(schema.querystring as TSchema));
  if (schema.body !== undefined) out.body = literalUnionsAsEnums(schema.body as TSchema);
  if (route.config?.cache !== undefined) {
    out.headers = IfNoneMatch;
    response[304] = NotModified;
  }
  if (spa && methods.some((m) => UNSAFE.has(m))) out.headers = XsrfHeader;
  if (schema.body !== undefined && !spa) out.consumes = bodyTypes(schema.body as TSchema);
  // The guard is the truth about who may call: the document follows it rather than a hand-kept list.
  const security = spa ? (schema as { security?: Record<string, string[]>[] }).security : securityFor(auth);
  if (security === undefined) delete out.security;
  else out.security = security;
  if (typeof auth === 'object') out['x-abilities'] = [auth.ability];
  const note = typeof auth === 'object' ? abilityNote(auth.ability) : auth === 'optional-token' ? OPTIONAL_TOKEN_NOTE : undefined;
  if (note !== undefined) out.description = out.description === undefined ? note : `${out.description}\n\n${note}`;
  return { schema: out, url };
};

// The headers the plumbing puts on /api answers, declared once under components/headers: the
// rate limits on every one (plugins/rate-limit.ts; absent while API_RATE_LIMIT is 0 or its store
// fails), Retry-After on a 429 (always) and on a 503 of an outage (plugins/errors.ts), the
// conditional reads' ETag (plugins/http-cache.ts), and who may keep an answer and what it varies
// on (those, the API guard and plugins/cors.ts set them on any answer).
const HEADERS = {
  RateLimitLimit: { description: 'Requests allowed a minute (API_RATE_LIMIT), per token or, without one, per address.', schema: { type: 'integer', minimum: 1 } },
  RateLimitRemaining: { description: 'Requests left in the current minute.', schema: { type: 'integer', minimum: 0 } },
  RateLimitReset: { description: 'When requests are allowed again, in Unix time (seconds).', schema: { type: 'integer' } },
  RetryAfter: { description: 'Seconds to wait before trying again.', required: true, schema: { type: 'integer', minimum: 1 } },
  RetryAfterOutage: { description: 'Seconds to wait before trying again, when the database is down or cannot store a write.', schema: { type: 'integer', minimum: 1 } },
  ETag: { description: 'The version of this answer (a weak tag): send it back as If-None-Match to get a 304 while it still holds.', schema: { type: 'string' } },
  CacheControl: {
    description: '`public, max-age=0` (kept, revalidated on each use) on an anonymous 200 or 304 of a conditional read; else `no-store`.',
    schema: { type: 'string', examples: ['no-store'] },
  },
  Vary: { description: '`Origin` when the request has one (the CORS headers depend on it); an error also lists `Accept-Language`, its language.', schema: { type: 'string' } },
} as const;

type Header = keyof typeof HEADERS;
type Operations = Record<string, Record<string, { responses?: Record<string, { headers?: Record<string, unknown> }> }>>;

/** Which components/headers an answer carries, by header name: from the plumbing's rules above. */
function headersOf(path: string, status: string, conditional: boolean): Record<string, Header> {
  if (!path.startsWith('/api/')) return {};
  const headers: Record<string, Header> = { 'X-RateLimit-Limit': 'RateLimitLimit', 'X-RateLimit-Remaining': 'RateLimitRemaining' };
  if (status === '429') Object.assign(headers, { 'Retry-After': 'RetryAfter', 'X-RateLimit-Reset': 'RateLimitReset' });
  if (status === '503') headers['Retry-After'] = 'RetryAfterOutage';
  if (conditional && (status === '200' || status === '304')) headers.ETag = 'ETag';
  return { ...headers, 'Cache-Control': 'CacheControl', Vary: 'Vary' };
}

/** The whole document's last touch: every answer's headers, as references to components/headers. */
function withHeaders(document: Record<string, unknown>): Record<string, unknown> {
  const paths = (document.paths ?? {}) as Operations;
  for (const [path, operations] of Object.entries(paths)) {
    for (const operation of Object.values(operations)) {
      const responses = operation.responses ?? {};
      const conditional = responses['304'] !== undefined;
      for (const [status, response] of Object.entries(responses)) {
        const headers = Object.entries(headersOf(path, status, conditional));
        if (headers.length === 0) continue;
        response.headers = { ...response.headers, ...Object.fromEntries(headers.map(([name, component]) => [name, { $ref: `#/components/headers/${component}` }])) };
      }
    }
  }
  const components = (document.components ?? {}) as Record<string, unknown>;
  return { ...document, components: { ...components, headers: HEADERS } };
}

const OpenApiDocument = Type.Object(
  { openapi: Type.String(), info: Type.Object({}, { additionalProperties: true }), paths: Type.Object({}, { additionalProperties: true }) },
  {
    additionalProperties: true,
    description: 'This OpenAPI 3.1 document.',
    examples: [{ openapi: '3.1.0', info: { title: 'Tessera API', version: '0.1.0' }, paths: {} }],
  },
);

export const openapiPlugin = fp(
  async (app: FastifyInstance) => {
    await app.register(swagger, {
      openapi: {
        openapi: '3.1.0',
        info: {
          title: `${app.config.appName} API`,
          version: packageVersion,
          license,
          description:
            'JSON API. Send `Accept: application/json` on every call. Authenticate with `Authorization: Bearer <id>|<secret>` ' +
            '(a token from POST /api/tokens). First-party single-page apps on a stateful domain may use the session cookie ' +
            'instead: GET /sanctum/csrf-cookie first, then send the XSRF-TOKEN cookie back as the X-XSRF-TOKEN header on writes. ' +
            'Every failure is the error envelope `{message, errors}`.',
        },
        servers: [{ url: app.config.appUrl }],
        tags: [
          { name: 'tokens', description: 'Personal access tokens' },
          { name: 'user', description: 'The authenticated user' },
          { name: 'posts', description: 'Published blog posts (and their editing by admins)' },
          { name: 'settings', description: 'Public site settings' },
          { name: 'spa', description: 'Cookie authentication for first-party single-page apps' },
          { name: 'meta', description: 'This document and the health check' },
        ],
        components: {
          securitySchemes: {
            bearer: {
              type: 'http',
              scheme: 'bearer',
              description: 'A personal access token `<id>|<secret>`, issued by POST /api/tokens and shown once.',
            },
            session: {
              type: 'apiKey',
              in: 'cookie',
              name: cookieName(app.config, SESSION_COOKIE),
              description:
                'The browser session, accepted only from origins listed in SANCTUM_STATEFUL_DOMAINS and only when no bearer ' +
                'token is sent. Writes also need the X-XSRF-TOKEN header (419 otherwise).',
            },
          },
        },
      },
      // Shared schemas keep their $id as their name under components/schemas (User, Post, …).
      refResolver: {
        buildLocalReference: (json, _baseUri, _fragment, i) => (typeof json.$id === 'string' ? json.$id : `def-${i}`),
      },
      transform: transform as never,
      transformObject: (document) => ('openapiObject' in document ? withHeaders(document.openapiObject as Record<string, unknown>) : document.swaggerObject) as never,
    });

    app.get(
      OPENAPI_PATH,
      {
        config: { auth: 'public' },
        schema: { summary: 'The OpenAPI 3.1 document of this API', tags: ['meta'], response: { 200: OpenApiDocument } },
      },
      async () => app.swagger(),
    );

    // Assets come from the installed package and are served by this app: no CDN. The page has
    // no inline script, so the site's CSP (script-src 'self', style-src 'self') applies unchanged.
    // BaseLayout leaves out Swagger's top bar, whose logo is an SVG with an inline <style> that
    // the CSP would block (and whose "Explore" box could only load this same document anyway).
    // The page links back to the site: the package's page has no place for it, so the link is put
    // first in its body as the page is sent (a plain link, there before any script runs).
    await app.register(async (docs) => {
      docs.addHook('onSend', async (request, reply, payload) => {
        const html = typeof payload === 'string' && String(reply.getHeader('content-type') ?? '').startsWith('text/html');
        return html ? withSiteLink(payload, localeOf(request, app.config.locale)) : payload;
      });
      await docs.register(swaggerUi, {
        routePrefix: DOCS_PREFIX,
        theme: { title: `${app.config.appName} API`, css: [{ filename: 'docs-dark.css', content: docsDarkCss }] },
        // The examples' highlighting: Swagger UI's default theme (agate) writes numbers at a contrast
        // of 3.4:1; tomorrow-night's lowest is 6.6:1 (axe's check in test/browser/docs.test.ts).
        uiConfig: { layout: 'BaseLayout', deepLinking: true, defaultModelsExpandDepth: 1, tryItOutEnabled: false, syntaxHighlight: { theme: 'tomorrow-night' } },
        validatorUrl: false,
      });
    });
  },
  { name: 'openapi' },
);
