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
import { errorResponses } from '../http/shared/schemas.js';
import { SESSION_COOKIE, cookieName } from './session.js';
import type { RouteAuth } from './types.js';

export const OPENAPI_PATH = '/api/openapi.json';
export const DOCS_PREFIX = '/docs';

const UNSAFE = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);

const packageVersion = (JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { version?: string }).version ?? '0.0.0';

/** Which paths the document describes: the JSON API, the SPA's CSRF-cookie endpoint and the health check. */
export function isDocumentedPath(url: string): boolean {
  return url.startsWith('/api/') || url.startsWith('/sanctum/') || url === '/up';
}

// /docs in dark mode: a stylesheet of our own, served by Swagger UI's plugin under /docs/theme/
// (a file from this app, so the CSP's style-src 'self' allows it); it applies only under
// prefers-color-scheme: dark.
const docsDarkCss = readFileSync(new URL('../../public/docs-dark.css', import.meta.url), 'utf8');

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

// Only routes that refuse an anonymous call carry a security requirement: Swagger UI draws a lock
// on every operation that has one, even an optional one ({}), and a lock on a public read tells
// the reader it needs a token. 'optional-token' routes say in their description what a token adds.
function securityFor(auth: RouteAuth | undefined): Record<string, string[]>[] | undefined {
  if (auth === 'token' || typeof auth === 'object') return [{ bearer: [] }, { session: [] }];
  return undefined;
}

const OPTIONAL_TOKEN_NOTE = 'No credential is needed. A token (or the SPA session), when sent, is checked (401 if invalid) and unlocks what this description reserves to it.';

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

type Transform = (input: { schema: FastifySchema; url: string; route: RouteOptions }) => { schema: FastifySchema; url: string };

/** Hides every route outside the API and completes the others from their guard declaration. */
const transform: Transform = ({ schema, url, route }) => {
  if (!isDocumentedPath(url) || (schema as { hide?: boolean } | undefined)?.hide === true) {
    return { schema: { ...schema, hide: true } as FastifySchema, url };
  }
  const auth = apiAuth(route);
  const methods = methodList(route.method);
  const declared = (schema.response ?? {}) as Record<string, TSchema>;
  // The health check is outside /api: no rate limit, no error envelope; it documents its own answers.
  const derived = url === '/up' ? {} : errorResponses(...plumbingStatuses(schema, auth, methods, url));
  const response: Record<string, TSchema> = { ...declared };
  for (const [status, envelope] of Object.entries(derived)) {
    if (response[status] === undefined) response[status] = envelope;
  }
  for (const [status, success] of Object.entries(response)) {
    if (success.description === undefined && SUCCESS_TEXT[status] !== undefined) response[status] = { ...success, description: SUCCESS_TEXT[status] };
  }
  const out: FastifySchema & { security?: unknown; description?: string; operationId?: string } = { ...schema, response };
  out.operationId ??= operationId(methods[0] ?? 'GET', url);
  // A query parameter with a default is optional for the client, though required after validation.
  if (schema.querystring !== undefined) out.querystring = optionalDefaults(schema.querystring as TSchema);
  // The guard is the truth about who may call: the document follows it rather than a hand-kept list.
  const security = securityFor(auth);
  if (security === undefined) delete out.security;
  else out.security = security;
  const note = typeof auth === 'object' ? `Needs a token with the \`${auth.ability}\` ability (403 otherwise).` : auth === 'optional-token' ? OPTIONAL_TOKEN_NOTE : undefined;
  if (note !== undefined) out.description = out.description === undefined ? note : `${out.description}\n\n${note}`;
  return { schema: out, url };
};

const OpenApiDocument = Type.Object(
  { openapi: Type.String(), info: Type.Object({}, { additionalProperties: true }), paths: Type.Object({}, { additionalProperties: true }) },
  { additionalProperties: true, description: 'This OpenAPI 3.1 document.' },
);

export const openapiPlugin = fp(
  async (app: FastifyInstance) => {
    await app.register(swagger, {
      openapi: {
        openapi: '3.1.0',
        info: {
          title: `${app.config.appName} API`,
          version: packageVersion,
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
    await app.register(swaggerUi, {
      routePrefix: DOCS_PREFIX,
      theme: { title: `${app.config.appName} API`, css: [{ filename: 'docs-dark.css', content: docsDarkCss }] },
      uiConfig: { layout: 'BaseLayout', deepLinking: true, defaultModelsExpandDepth: 1, tryItOutEnabled: false },
      validatorUrl: false,
    });
  },
  { name: 'openapi' },
);
