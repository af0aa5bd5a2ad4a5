// The self-documenting API: GET /api/openapi.json is generated from the route schemas, covers
// every registered /api route, and every answer the API really gives (success or error) is a
// documented status whose schema that answer validates against. /docs is served locally.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { Ajv2020 } from 'ajv/dist/2020.js';
import addFormatsModule from 'ajv-formats';
import type { FastifyInstance, LightMyRequestResponse } from 'fastify';
import { buildTestApp, createUser, issueToken, type TestApp } from '../helpers.js';
import { CookieJar, TEST_LOGIN_PATH, buildStatefulApp } from './stateful-support.js';
import { insertPost } from './support.js';

type Schema = Record<string, unknown>;
type Media = { schema: Schema; example?: unknown };
type HeaderObject = { $ref?: string; description?: string; required?: boolean; schema?: Schema };
type Operation = {
  operationId?: string;
  summary?: string;
  description?: string;
  security?: Record<string, string[]>[];
  'x-abilities'?: string[];
  requestBody?: { content: Record<string, Media> };
  parameters?: { in: string; name: string; required?: boolean; description?: string; schema: Schema }[];
  responses: Record<string, { description: string; headers?: Record<string, HeaderObject>; content?: Record<string, Media> }>;
};
type Document = {
  openapi: string;
  info: { title: string; version: string; license?: { name: string } };
  servers?: { url: string }[];
  paths: Record<string, Record<string, Operation>>;
  components: { schemas: Record<string, Schema>; securitySchemes: Record<string, Schema>; headers?: Record<string, HeaderObject> };
};

const SPA = 'http://localhost:5173';
// The headers the document declares per answer (src/plugins/openapi.ts): one the service sends
// on an /api answer must be declared for that answer's status.
const TRACKED_HEADERS = ['x-ratelimit-limit', 'x-ratelimit-remaining', 'x-ratelimit-reset', 'retry-after', 'etag', 'cache-control', 'vary'];
const FORM = 'application/x-www-form-urlencoded';
const API_PATH = /^\/(api\/|sanctum\/|up$)/;
const DOC_ID = 'https://tessera.test/openapi.json';
const SHARED = ['ErrorEnvelope', 'User', 'PostItem', 'Post'];

// ajv-formats is CommonJS; under NodeNext its default export sits one level down.
type AddFormats = (ajv: Ajv2020, formats: string[]) => Ajv2020;
const addFormats = ((addFormatsModule as unknown as { default?: AddFormats }).default ?? addFormatsModule) as unknown as AddFormats;

/** Every route of the app as "METHOD /path", read from Fastify's own route tree. */
function registeredRoutes(app: FastifyInstance): { method: string; url: string }[] {
  const routes: { method: string; url: string }[] = [];
  const stack: string[] = [];
  for (const line of app.printRoutes({ commonPrefix: false }).split('\n')) {
    const match = /^([│ ]*)[├└]── (.+?) \(([A-Z, ]+)\)$/u.exec(line);
    if (match === null) continue;
    const depth = (match[1] ?? '').length / 4;
    stack.length = depth;
    stack.push(match[2] ?? '');
    const url = stack.join('');
    for (const method of (match[3] ?? '').split(', ')) routes.push({ method, url });
  }
  return routes;
}

/** A value the schema accepts (enough for the simple bodies of this API): required fields only. */
function sampleOf(schema: Schema): unknown {
  if (schema.type === 'object') {
    const properties = (schema.properties ?? {}) as Record<string, Schema>;
    const required = (schema.required ?? []) as string[];
    return Object.fromEntries(required.map((name) => [name, sampleOf(properties[name] ?? {})]));
  }
  if (schema.type === 'integer' || schema.type === 'number') return (schema.minimum as number | undefined) ?? 1;
  if (schema.type === 'boolean') return false;
  if (schema.format === 'email') return 'probe@example.com';
  if (schema.format === 'date-time') return new Date().toISOString();
  return 'p'.repeat(Math.max(8, (schema.minLength as number | undefined) ?? 0));
}

const toOpenApiPath = (url: string): string => url.replace(/:([A-Za-z_]+)/g, '{$1}');

/** The headers an answer declares, by lowercase name, references to components/headers resolved. */
function declaredHeaders(doc: Document, response: { headers?: Record<string, HeaderObject> }): Map<string, HeaderObject> {
  const resolve = (header: HeaderObject): HeaderObject => {
    const name = /^#\/components\/headers\/(.+)$/.exec(header.$ref ?? '')?.[1];
    if (name === undefined) return header;
    const found = doc.components.headers?.[name];
    assert.ok(found, `dangling ${header.$ref}`);
    return found;
  };
  return new Map(Object.entries(response.headers ?? {}).map(([name, header]) => [name.toLowerCase(), resolve(header)]));
}
const pointer = (...parts: string[]): string => parts.map((p) => p.replace(/~/g, '~0').replace(/\//g, '~1')).join('/');

describe('OpenAPI document', () => {
  let t: TestApp;
  let doc: Document;
  let ajv: Ajv2020;
  let admin: Awaited<ReturnType<typeof createUser>>;
  let adminJar: CookieJar;
  let postSlug: string;

  // The API's own operations. The SPA's steps on browser paths (/login, …) answer pages unless
  // asked for JSON through the SPA flow: test/api/spa-contract.test.ts checks those.
  const operations = (): { path: string; method: string; op: Operation }[] =>
    Object.entries(doc.paths)
      .filter(([path]) => API_PATH.test(path))
      .flatMap(([path, ops]) => Object.entries(ops).map(([method, op]) => ({ path, method, op })));

  /** Asserts that the answer's status is documented for the operation and its body fits the schema. */
  function assertDocumented(path: string, method: string, response: LightMyRequestResponse, context: string): void {
    const op = doc.paths[path]?.[method];
    assert.ok(op, `${method.toUpperCase()} ${path} is not documented`);
    const status = String(response.statusCode);
    const documented = op.responses[status];
    assert.ok(documented, `${context}: ${method.toUpperCase()} ${path} answered ${status}, which the document does not list (${Object.keys(op.responses).join(', ')})`);
    if (path.startsWith('/api/')) {
      const declared = declaredHeaders(doc, documented);
      for (const name of TRACKED_HEADERS) {
        const value = response.headers[name];
        if (value === undefined) continue;
        assert.ok(declared.has(name), `${context}: ${method.toUpperCase()} ${path} ${status} sends ${name}, which the document does not declare`);
        if (declared.get(name)?.schema?.type === 'integer') assert.match(String(value), /^\d+$/, `${context}: ${name} is the integer the document says`);
      }
      for (const [name, header] of declared) {
        if (header.required === true) assert.ok(response.headers[name] !== undefined, `${context}: ${method.toUpperCase()} ${path} ${status} lacks the required ${name}`);
      }
    }
    if (response.statusCode === 204 || response.statusCode === 304) return;
    const schema = documented.content?.['application/json']?.schema;
    assert.ok(schema, `${method.toUpperCase()} ${path} ${status} has no JSON schema`);
    const validate = ajv.compile({ $ref: `${DOC_ID}#/${pointer('paths', path, method, 'responses', status, 'content', 'application/json', 'schema')}` });
    const body: unknown = response.json();
    assert.ok(validate(body), `${context}: ${method.toUpperCase()} ${path} ${status} body does not fit the document: ${ajv.errorsText(validate.errors)}\n${response.body}`);
  }

  before(async () => {
    // A request limit on, so that every answer carries the headers it documents.
    t = await buildStatefulApp({ SANCTUM_STATEFUL_DOMAINS: 'localhost:5173', API_RATE_LIMIT: '100000' });
    admin = await createUser(t.app, { admin: true, name: 'Editor' });
    postSlug = (await insertPost(t.db, { title: 'Documented', author_id: admin.id })).slug;
    adminJar = new CookieJar();
    adminJar.take(await t.app.inject({ url: '/sanctum/csrf-cookie', headers: { origin: SPA } }));
    adminJar.take(await t.app.inject({ method: 'POST', url: `${TEST_LOGIN_PATH}/${admin.id}`, headers: { origin: SPA, cookie: adminJar.header() } }));
    const response = await t.app.inject({ url: '/api/openapi.json', headers: { accept: 'application/json' } });
    assert.equal(response.statusCode, 200);
    doc = response.json() as Document;
    ajv = new Ajv2020({ strict: false, allErrors: true, validateSchema: false });
    addFormats(ajv, ['email', 'date-time', 'uri']);
    ajv.addSchema({ ...doc, $id: DOC_ID });
  });
  after(() => t.close());

  it('is an OpenAPI 3.1 document about this service', () => {
    assert.equal(doc.openapi, '3.1.0');
    assert.equal(doc.info.title, 'Tessera API');
    assert.match(doc.info.version, /^\d+\.\d+\.\d+/);
    assert.equal(doc.servers?.[0]?.url, t.config.appUrl);
    assert.ok(doc.info.license?.name, 'info.license');
  });

  it('takes its server from APP_URL', async () => {
    const other = await buildTestApp({ APP_URL: 'https://blog.tessera.test' });
    try {
      const served = (await other.app.inject({ url: '/api/openapi.json' })).json() as Document;
      assert.deepEqual(served.servers, [{ url: 'https://blog.tessera.test' }]);
    } finally {
      await other.close();
    }
  });

  it('documents every registered /api route with each of its methods, and nothing that is not a route', () => {
    const registered = registeredRoutes(t.app).filter((r) => r.url.startsWith('/api/') && r.method !== 'HEAD' && r.method !== 'OPTIONS');
    assert.ok(registered.length >= 13, `only ${registered.length} /api routes found`);
    for (const { method, url } of registered) {
      assert.ok(doc.paths[toOpenApiPath(url)]?.[method.toLowerCase()], `${method} ${url} missing from the document`);
    }
    const known = new Set(registered.map((r) => `${r.method.toLowerCase()} ${toOpenApiPath(r.url)}`));
    known.add('get /sanctum/csrf-cookie');
    known.add('get /up');
    for (const { path, method } of operations()) assert.ok(known.has(`${method} ${path}`), `${method} ${path} is documented but not routed`);
    assert.ok(doc.paths['/sanctum/csrf-cookie']?.get, 'the SPA cookie endpoint is documented');
  });

  it('leaves pages, the panel and /docs out (outside the API, only the SPA\'s JSON steps)', () => {
    for (const [path, ops] of Object.entries(doc.paths)) {
      if (API_PATH.test(path)) continue;
      assert.doesNotMatch(path, /^\/(admin|docs)(\/|$)/);
      for (const [method, op] of Object.entries(ops)) assert.ok((op as { tags?: string[] }).tags?.includes('spa'), `${method} ${path} is a page`);
    }
    for (const page of ['/dashboard', '/profile', '/security']) assert.equal(doc.paths[page], undefined, page);
  });

  it('documents the health check GET /up with its 200 and 503 bodies, outside any credential', () => {
    const op = doc.paths['/up']?.get;
    assert.ok(op, 'GET /up is not documented');
    assert.deepEqual(op.security, []);
    assert.deepEqual(Object.keys(op.responses).sort(), ['200', '503']);
    for (const status of ['200', '503']) {
      const schema: Schema | undefined = op.responses[status]?.content?.['application/json']?.schema;
      assert.deepEqual(Object.keys((schema?.properties ?? {}) as object).sort(), ['database', 'database_writable', 'rate_limit_store', 'status'], status);
      // Present only when the database answers but cannot store a write (a full disk).
      assert.deepEqual(((schema?.required ?? []) as string[]).sort(), ['database', 'rate_limit_store', 'status'], status);
    }
  });

  it('declares who may call each operation as its guard does: public ones none, GET /api/posts a credential it may leave out, token routes a token or the session', () => {
    const open = ['get /api/posts/{slug}', 'get /api/settings', 'post /api/tokens', 'get /api/openapi.json', 'get /sanctum/csrf-cookie', 'get /up'];
    for (const route of open) {
      const [method = '', path = ''] = route.split(' ');
      const op = doc.paths[path]?.[method];
      assert.ok(op, `${route} not documented`);
      assert.deepEqual(op.security, [], `${route} must declare that it needs no credential`);
    }
    // Optional but checked (drafts for admins): {} first, then either credential.
    assert.deepEqual(doc.paths['/api/posts']?.get?.security, [{}, { bearer: [] }, { session: [] }]);
    assert.match(String(doc.paths['/api/posts']?.get?.description), /No credential is needed/);
    for (const { path, method, op } of operations()) assert.ok(Array.isArray(op.security), `${method} ${path} declares no security`);
    for (const route of ['get /api/user', 'put /api/user', 'delete /api/tokens/current', 'post /api/posts']) {
      const [method = '', path = ''] = route.split(' ');
      assert.deepEqual(doc.paths[path]?.[method]?.security, [{ bearer: [] }, { session: [] }], route);
    }
  });

  it('gives every operation a unique operationId, a summary and a tag', () => {
    const ids = operations().map(({ op }) => op.operationId);
    assert.equal(new Set(ids).size, ids.length);
    for (const { path, method, op } of operations()) {
      assert.ok(op.operationId, `${method} ${path}`);
      assert.ok((op as { summary?: string }).summary, `${method} ${path} has no summary`);
      assert.ok((op as { tags?: string[] }).tags?.length, `${method} ${path} has no tag`);
    }
  });

  it('declares the bearer scheme (and the SPA session cookie) and requires a credential exactly where the API answers 401 without one', async () => {
    assert.deepEqual({ type: doc.components.securitySchemes.bearer?.type, scheme: doc.components.securitySchemes.bearer?.scheme }, { type: 'http', scheme: 'bearer' });
    assert.deepEqual({ type: doc.components.securitySchemes.session?.type, in: doc.components.securitySchemes.session?.in }, { type: 'apiKey', in: 'cookie' });
    for (const { path, method, op } of operations()) {
      const url = path.replace('{slug}', 'no-such-post');
      // A body that passes validation, so that only the credentials decide.
      const schema = op.requestBody?.content['application/json']?.schema;
      const payload = schema === undefined ? {} : { payload: sampleOf(schema) as object };
      const response = await t.app.inject({ method: method.toUpperCase() as 'GET', url, headers: { accept: 'application/json' }, ...payload });
      // Required: a bearer requirement, and no empty one ({} lets an anonymous call through).
      const secured = (op.security ?? []).some((requirement) => 'bearer' in requirement) && !(op.security ?? []).some((requirement) => Object.keys(requirement).length === 0);
      // (POST /api/tokens answers 401 to wrong credentials: that is not a missing token.)
      const unauthenticated = response.statusCode === 401 && (response.json() as { message: string }).message === 'Unauthenticated.';
      if (unauthenticated) assert.ok(secured, `${method} ${path} answers 401 anonymously but the document does not require a token`);
      if (secured) assert.ok(unauthenticated, `${method} ${path} is documented as needing a token but answered ${response.statusCode}`);
    }
  });

  it('puts the shared schemas under components/schemas by their $id, and every $ref resolves', () => {
    for (const name of SHARED) assert.ok(doc.components.schemas[name], `${name} missing`);
    assert.deepEqual(Object.keys(doc.components.schemas).filter((name) => /^def-\d+$/.test(name)), []);
    const refs: string[] = [];
    const walk = (node: unknown): void => {
      if (Array.isArray(node)) node.forEach(walk);
      else if (node !== null && typeof node === 'object') {
        for (const [key, value] of Object.entries(node)) {
          if (key === '$ref' && typeof value === 'string') refs.push(value);
          else walk(value);
        }
      }
    };
    walk(doc.paths);
    walk(doc.components.schemas);
    assert.ok(refs.length > 0);
    for (const ref of refs) {
      const [, kind, name = ''] = /^#\/components\/(schemas|headers)\/(.+)$/.exec(ref) ?? [];
      assert.ok(kind === 'schemas' ? doc.components.schemas[name] : kind === 'headers' ? doc.components.headers?.[name] : undefined, `dangling $ref ${ref}`);
    }
    assert.equal(doc.paths['/api/user']?.get?.responses['200']?.content?.['application/json']?.schema.$ref, '#/components/schemas/User');
    assert.equal(doc.paths['/api/posts/{slug}']?.get?.responses['200']?.content?.['application/json']?.schema.properties !== undefined, true);
  });

  it('describes every error status of every API operation as the error envelope', () => {
    for (const { path, method, op } of operations()) {
      // The health check's 503 is its own body (the database is down), not an API error.
      if (path === '/up') continue;
      for (const [status, response] of Object.entries(op.responses)) {
        if (Number(status) < 400) continue;
        assert.ok(response.description.length > 0);
        assert.equal(response.content?.['application/json']?.schema.$ref, '#/components/schemas/ErrorEnvelope', `${method} ${path} ${status}`);
      }
    }
  });

  describe('lists the error statuses of each route', () => {
    const table: { route: string; statuses: number[] }[] = [
      { route: 'post /api/tokens', statuses: [400, 401, 415, 422, 429, 500] },
      { route: 'delete /api/tokens/current', statuses: [401, 419, 429, 500] },
      { route: 'delete /api/tokens', statuses: [401, 419, 429, 500] },
      { route: 'get /api/user', statuses: [401, 429, 500] },
      { route: 'put /api/user', statuses: [400, 401, 415, 419, 422, 429, 500] },
      { route: 'put /api/user/password', statuses: [400, 401, 415, 419, 422, 429, 500] },
      { route: 'get /api/posts', statuses: [401, 422, 429, 500] },
      { route: 'get /api/posts/{slug}', statuses: [404, 429, 500] },
      { route: 'post /api/posts', statuses: [400, 401, 403, 415, 419, 422, 429, 500] },
      { route: 'put /api/posts/{slug}', statuses: [401, 403, 404, 419, 422, 429, 500] },
      { route: 'delete /api/posts/{slug}', statuses: [401, 403, 404, 419, 429, 500] },
      { route: 'get /api/settings', statuses: [429, 500] },
    ];
    for (const { route, statuses } of table) {
      it(`${route}: ${statuses.join(', ')}`, () => {
        const [method = '', path = ''] = route.split(' ');
        const op = doc.paths[path]?.[method];
        assert.ok(op, `${route} not documented`);
        for (const status of statuses) assert.ok(op.responses[String(status)], `${route} does not list ${status}`);
      });
    }
  });

  describe('sample answers validate against the document', () => {
    const samples: { name: string; path: string; method: string; request: (app: FastifyInstance) => Promise<LightMyRequestResponse>; status: number }[] = [
      {
        name: 'a token issued',
        path: '/api/tokens',
        method: 'post',
        status: 200,
        request: (app) => app.inject({ method: 'POST', url: '/api/tokens', payload: { email: admin.email, password: admin.plainPassword, device_name: 'doc' } }),
      },
      {
        name: 'the authenticated user',
        path: '/api/user',
        method: 'get',
        status: 200,
        request: async (app) => app.inject({ url: '/api/user', headers: { authorization: `Bearer ${await issueToken(app, admin.email, admin.plainPassword)}` } }),
      },
      { name: 'a page of posts', path: '/api/posts', method: 'get', status: 200, request: (app) => app.inject({ url: '/api/posts?per_page=1' }) },
      { name: 'one post', path: '/api/posts/{slug}', method: 'get', status: 200, request: (app) => app.inject({ url: `/api/posts/${postSlug}` }) },
      { name: 'the public settings', path: '/api/settings', method: 'get', status: 200, request: (app) => app.inject({ url: '/api/settings' }) },
      { name: 'a 401 without a token', path: '/api/user', method: 'get', status: 401, request: (app) => app.inject({ url: '/api/user', headers: { accept: 'application/json' } }) },
      { name: 'a 401 on bad credentials', path: '/api/tokens', method: 'post', status: 401, request: (app) => app.inject({ method: 'POST', url: '/api/tokens', payload: { email: 'nobody@example.com', password: 'x', device_name: 'doc' } }) },
      { name: 'a 422 with field errors', path: '/api/tokens', method: 'post', status: 422, request: (app) => app.inject({ method: 'POST', url: '/api/tokens', payload: { email: 'not-an-email' } }) },
      { name: 'a 404 for an unknown slug', path: '/api/posts/{slug}', method: 'get', status: 404, request: (app) => app.inject({ url: '/api/posts/no-such-post' }) },
      {
        name: 'a 419 for a cookie-authenticated write without X-XSRF-TOKEN',
        path: '/api/user',
        method: 'put',
        status: 419,
        request: (app) => app.inject({ method: 'PUT', url: '/api/user', headers: { origin: SPA, cookie: adminJar.header() }, payload: { name: 'Editor' } }),
      },
      {
        name: 'a 403 for a token without the ability',
        path: '/api/posts',
        method: 'post',
        status: 403,
        request: async (app) => {
          const { plaintext } = await app.services.tokens.issue(admin.id, 'read-only', ['posts:read']);
          return app.inject({ method: 'POST', url: '/api/posts', headers: { authorization: `Bearer ${plaintext}` }, payload: { title: 'Nope' } });
        },
      },
      { name: 'the health check', path: '/up', method: 'get', status: 200, request: (app) => app.inject({ url: '/up' }) },
      { name: 'the document itself', path: '/api/openapi.json', method: 'get', status: 200, request: (app) => app.inject({ url: '/api/openapi.json' }) },
    ];
    for (const { name, path, method, status, request } of samples) {
      it(`${name} (${method.toUpperCase()} ${path} ${status})`, async () => {
        const response = await request(t.app);
        assert.equal(response.statusCode, status, response.body);
        assertDocumented(path, method, response, name);
      });
    }

    it('refuses a sample that breaks the schema (the check has teeth)', () => {
      const validate = ajv.compile({ $ref: `${DOC_ID}#/components/schemas/User` });
      assert.equal(validate({ id: '1', name: 'x', email: 'x@example.com', email_verified_at: null, created_at: 'now', updated_at: 'now' }), false);
    });
  });

  it('lists every status the API really answers each operation with, for anonymous, token, ability-less, cookie and malformed requests', async () => {
    for (const { path, method, op } of operations()) {
      const verb = method.toUpperCase() as 'GET';
      const hasBody = op.requestBody !== undefined;
      const slugs = method === 'get' ? [postSlug, 'no-such-post'] : ['no-such-post'];
      for (const slug of path.includes('{slug}') ? slugs : ['']) {
        const url = path.replace('{slug}', slug);
        const body = hasBody ? { payload: {} } : {};
        const fresh = async (abilities: string[]) => (await t.app.services.tokens.issue(admin.id, 'probe', abilities)).plaintext;
        const probes: [string, () => Promise<LightMyRequestResponse>][] = [
          ['anonymous', () => t.app.inject({ method: verb, url, ...body })],
          ['admin token', async () => t.app.inject({ method: verb, url, headers: { authorization: `Bearer ${await fresh(['*'])}` }, ...body })],
          ['token without abilities', async () => t.app.inject({ method: verb, url, headers: { authorization: `Bearer ${await fresh([])}` }, ...body })],
          ['revoked token', () => t.app.inject({ method: verb, url, headers: { authorization: 'Bearer 1|revoked' }, ...body })],
          ['SPA cookie without X-XSRF-TOKEN', () => t.app.inject({ method: verb, url, headers: { origin: SPA, cookie: adminJar.header() }, ...body })],
        ];
        if (hasBody) {
          probes.push(['invalid JSON', async () => t.app.inject({ method: verb, url, headers: { authorization: `Bearer ${await fresh(['*'])}`, 'content-type': 'application/json' }, payload: '{"a":' })]);
          probes.push(['text/plain body', async () => t.app.inject({ method: verb, url, headers: { authorization: `Bearer ${await fresh(['*'])}`, 'content-type': 'text/plain' }, payload: 'hello' })]);
        }
        for (const [name, probe] of probes) assertDocumented(path, method, await probe(), `${name} ${verb} ${url}`);
      }
    }
  });

  it('documents the request bodies the routes validate: an empty body is refused with exactly the documented required fields', async () => {
    for (const { path, method, op } of operations()) {
      const schema = op.requestBody?.content['application/json']?.schema;
      if (schema === undefined) continue;
      const required = ((schema.required as string[] | undefined) ?? []).slice().sort();
      const token = (await t.app.services.tokens.issue(admin.id, 'bodies', ['*'])).plaintext;
      const url = path.replace('{slug}', postSlug);
      const response = await t.app.inject({ method: method.toUpperCase() as 'POST', url, headers: { authorization: `Bearer ${token}` }, payload: {} });
      if (required.length === 0) {
        assert.notEqual(response.statusCode, 422, `${method} ${path}: nothing is documented as required`);
      } else {
        assert.equal(response.statusCode, 422, `${method} ${path}`);
        assert.deepEqual(Object.keys((response.json() as { errors: object }).errors).sort(), required, `${method} ${path}`);
      }
    }
  });

  it('documents the query limits the routes enforce (outside them: 422 on that parameter)', async () => {
    let checked = 0;
    for (const { path, method, op } of operations()) {
      for (const parameter of op.parameters ?? []) {
        if (parameter.in !== 'query') continue;
        const { minimum, maximum } = parameter.schema as { minimum?: number; maximum?: number };
        for (const value of [minimum === undefined ? undefined : minimum - 1, maximum === undefined ? undefined : maximum + 1]) {
          if (value === undefined) continue;
          const response = await t.app.inject({ method: method.toUpperCase() as 'GET', url: `${path}?${parameter.name}=${value}` });
          assert.equal(response.statusCode, 422, `${path}?${parameter.name}=${value}`);
          assert.ok((response.json() as { errors: Record<string, unknown> }).errors[parameter.name], `${parameter.name} in errors`);
          checked += 1;
        }
        const inside = await t.app.inject({ method: method.toUpperCase() as 'GET', url: `${path}?${parameter.name}=${minimum ?? maximum ?? ''}` });
        if (minimum !== undefined || maximum !== undefined) assert.equal(inside.statusCode, 200, `${path}?${parameter.name} at its limit`);
      }
    }
    assert.ok(checked >= 4, `only ${checked} limits checked`);
  });

  it('gives every operation an example of its success answer, of its request body and of each error answer, each valid against its schema', () => {
    let checked = 0;
    for (const { path, method, op } of operations()) {
      const media: [string, Media][] = Object.entries(op.requestBody?.content ?? {}).map(([type, m]) => [pointer('paths', path, method, 'requestBody', 'content', type), m]);
      for (const [status, response] of Object.entries(op.responses)) {
        if (status.startsWith('3')) continue;
        for (const [type, m] of Object.entries(response.content ?? {})) media.push([pointer('paths', path, method, 'responses', status, 'content', type), m]);
      }
      // Every operation shows at least one: a body-less 204 one (DELETE /api/tokens, the CSRF cookie) by its errors.
      assert.ok(media.length > 0, `${method} ${path}: no example anywhere (no body, no JSON answer)`);
      for (const [at, m] of media) {
        assert.ok(m.example !== undefined, `${method} ${path}: no example at ${at}`);
        const validate = ajv.compile({ $ref: `${DOC_ID}#/${at}/schema` });
        assert.ok(validate(m.example), `${method} ${path}: the example at ${at} does not fit its schema: ${ajv.errorsText(validate.errors)}`);
        checked += 1;
      }
    }
    assert.ok(checked >= 100, `only ${checked} examples`);
  });

  it("gives each error answer the service's own message as its example, and a 422 the route's own validation answer", async () => {
    const messages: Record<string, string> = {
      '401': 'Unauthenticated.',
      '403': 'This action is unauthorized.',
      '404': 'Not Found.',
      '419': 'CSRF token mismatch.',
      '429': 'Too Many Attempts.',
      '503': 'Service Unavailable.',
    };
    for (const { path, method, op } of operations()) {
      if (path === '/up') continue;
      const inputs = new Set([
        ...Object.keys((op.requestBody?.content['application/json']?.schema.properties ?? {}) as Schema),
        ...(op.parameters ?? []).filter((p) => p.in === 'query' || p.in === 'path').map((p) => p.name),
      ]);
      for (const [status, response] of Object.entries(op.responses)) {
        const example = response.content?.['application/json']?.example as { message: string; errors: Record<string, string[]> } | undefined;
        if (Number(status) < 400 || example === undefined) continue;
        const expected = path === '/api/tokens' && method === 'post' && status === '401' ? 'The provided credentials are incorrect.' : messages[status];
        if (expected !== undefined) assert.deepEqual(example, { message: expected, errors: {} }, `${method} ${path} ${status}`);
        if (status === '422') {
          const fields = Object.keys(example.errors);
          assert.ok(fields.length > 0 && fields.every((field) => inputs.has(field)), `${method} ${path} 422: its example names ${fields.join(', ')}, not fields of ${[...inputs].join(', ')}`);
          assert.equal(example.message, example.errors[fields[0]!]?.[0]);
        }
      }
    }
    const csrf = doc.paths['/sanctum/csrf-cookie']?.get?.responses;
    assert.deepEqual(csrf?.['429']?.content?.['application/json']?.example, { message: 'Too Many Attempts.', errors: {} });
    assert.equal((doc.paths['/api/tokens']?.delete?.responses['401']?.content?.['application/json']?.example as { message?: string } | undefined)?.message, 'Unauthenticated.');
    // A 422's example is what the route's own validation answers: an empty body, a wrong query.
    const example422 = (path: string, method: string): unknown => doc.paths[path]?.[method]?.responses['422']?.content?.['application/json']?.example;
    assert.deepEqual((await t.app.inject({ method: 'POST', url: '/api/tokens', payload: {} })).json(), example422('/api/tokens', 'post'));
    assert.deepEqual((await t.app.inject({ url: '/api/posts?locale=%25' })).json(), example422('/api/posts', 'get'));
  });

  it('declares the conditional reads: their 304 (no body, no Content-Type), If-None-Match, ETag and Cache-Control', async () => {
    const conditional = operations().filter(({ op }) => op.responses['304'] !== undefined);
    assert.deepEqual(conditional.map(({ method, path }) => `${method} ${path}`).sort(), ['get /api/posts', 'get /api/posts/{slug}', 'get /api/settings']);
    for (const { path, method, op } of conditional) {
      const parameter = op.parameters?.find((p) => p.in === 'header' && p.name === 'If-None-Match');
      assert.equal(parameter?.required, false, `${path}: If-None-Match`);
      for (const status of ['200', '304']) {
        const headers = declaredHeaders(doc, op.responses[status]!);
        for (const name of ['etag', 'cache-control']) assert.ok(headers.has(name), `${path} ${status} declares ${name}`);
      }
      assert.equal(op.responses['304']?.content, undefined, `${path}: a 304 has no body`);
      const url = path.replace('{slug}', postSlug);
      const first = await t.app.inject({ url });
      assert.equal(first.statusCode, 200, url);
      assert.equal(first.headers['cache-control'], 'public, max-age=0');
      assertDocumented(path, method, first, `GET ${url}`);
      const again = await t.app.inject({ url, headers: { 'if-none-match': String(first.headers.etag) } });
      assert.equal(again.statusCode, 304, url);
      assert.equal(again.headers['content-type'], undefined, `${url}: a 304 carries no Content-Type`);
      assert.equal(again.body, '');
      assertDocumented(path, method, again, `GET ${url} with If-None-Match`);
    }
  });

  it("declares a 429's Retry-After and rate-limit headers, which the service sends", async () => {
    const limited = await buildTestApp({ API_RATE_LIMIT: '2' });
    try {
      const answers = [];
      for (let i = 0; i < 3; i += 1) answers.push(await limited.app.inject({ url: '/api/settings', headers: { 'accept-language': 'fr' } }));
      const refused = answers[2]!;
      assert.equal(refused.statusCode, 429);
      for (const name of ['retry-after', 'x-ratelimit-limit', 'x-ratelimit-remaining', 'x-ratelimit-reset']) assert.ok(refused.headers[name] !== undefined, name);
      assert.match(String(refused.headers.vary), /Accept-Language/);
      assert.equal(declaredHeaders(doc, doc.paths['/api/settings']!.get!.responses['429']!).get('retry-after')?.required, true);
      answers.forEach((answer, i) => assertDocumented('/api/settings', 'get', answer, `request ${i + 1} of 3 under a limit of 2`));
    } finally {
      await limited.close();
    }
  });

  it('names the ability an operation needs in x-abilities and in its description, as its guard checks it', async () => {
    const editor = await createUser(t.app, { admin: true, name: 'Ability probe' });
    const tokenWith = async (abilities: string[]) => (await t.app.services.tokens.issue(editor.id, 'abilities', abilities)).plaintext;
    const needing = operations().filter(({ op }) => op['x-abilities'] !== undefined);
    assert.deepEqual(needing.map(({ method, path }) => `${method} ${path}`).sort(), [
      'delete /api/posts/{slug}',
      'delete /api/tokens',
      'post /api/posts',
      'put /api/posts/{slug}',
      'put /api/user',
      'put /api/user/password',
    ]);
    for (const { path, method, op } of operations()) {
      const required = (op.security ?? []).length > 0 && !(op.security ?? []).some((r) => Object.keys(r).length === 0);
      if (!required) continue;
      const abilities = op['x-abilities'] ?? [];
      for (const ability of abilities) assert.ok(op.description?.includes(`\`${ability}\``), `${method} ${path}: the description names ${ability}`);
      const url = path.replace('{slug}', 'no-such-post');
      const schema = op.requestBody?.content['application/json']?.schema;
      const payload = schema === undefined ? {} : { payload: sampleOf(schema) as object };
      const call = async (granted: string[]) =>
        (await t.app.inject({ method: method.toUpperCase() as 'GET', url, headers: { authorization: `Bearer ${await tokenWith(granted)}` }, ...payload })).statusCode;
      // A token holding what x-abilities lists passes the guard; one holding nothing passes only where it lists nothing.
      assert.ok(![401, 403].includes(await call(abilities)), `${method} ${path} with ${abilities.join(', ') || 'no ability'}`);
      if (abilities.length > 0) assert.equal(await call(['posts:read']), 403, `${method} ${path} without ${abilities.join(', ')}`);
    }
  });

  it('declares both body types where a form can carry every field, and the service takes both there', async () => {
    const formTyped: string[] = [];
    for (const { path, method, op } of operations()) {
      if (op.requestBody === undefined || !path.startsWith('/api/')) continue;
      const schema = op.requestBody.content['application/json']?.schema ?? {};
      const allText = Object.values((schema.properties ?? {}) as Record<string, Schema>).every((property) => property.type === 'string');
      assert.deepEqual(Object.keys(op.requestBody.content), allText ? ['application/json', FORM] : ['application/json'], `${method} ${path}`);
      if (allText) formTyped.push(`${method} ${path}`);
    }
    assert.deepEqual(formTyped.sort(), ['post /api/tokens', 'put /api/user', 'put /api/user/password']);
    const owner = await createUser(t.app, { name: 'Form probe' });
    const credentials = { email: owner.email, password: owner.plainPassword, device_name: 'form' };
    const asForm = (fields: Record<string, string>) => ({ headers: { 'content-type': FORM }, payload: new URLSearchParams(fields).toString() });
    const issued = [
      await t.app.inject({ method: 'POST', url: '/api/tokens', payload: credentials }),
      await t.app.inject({ method: 'POST', url: '/api/tokens', ...asForm(credentials) }),
    ];
    for (const answer of issued) {
      assert.equal(answer.statusCode, 200, answer.body);
      assertDocumented('/api/tokens', 'post', answer, 'a token issued');
    }
    const token = (issued[1]!.json() as { token: string }).token;
    const renamed = await t.app.inject({ method: 'PUT', url: '/api/user', headers: { authorization: `Bearer ${token}`, 'content-type': FORM }, payload: 'name=Form+renamed' });
    assert.equal(renamed.statusCode, 200, renamed.body);
    assert.equal((renamed.json() as { name: string }).name, 'Form renamed');
    const again = await t.app.inject({ method: 'PUT', url: '/api/user', headers: { authorization: `Bearer ${token}` }, payload: { name: 'Json renamed' } });
    assert.equal((again.json() as { name: string }).name, 'Json renamed');
  });

  it('types what a client reads: PostItem.status is an enum, the status filter says who may ask for drafts, the settings are typed', async () => {
    const status = (doc.components.schemas.PostItem?.properties as Record<string, Schema> | undefined)?.status;
    assert.deepEqual(status, { type: 'string', enum: ['draft', 'published', 'archived'] });
    const filter = doc.paths['/api/posts']?.get?.parameters?.find((p) => p.name === 'status');
    assert.deepEqual(filter?.schema, { type: 'string', enum: ['draft', 'published', 'archived'] });
    assert.match(String(filter?.description), /422/);
    assert.match(String(filter?.description), /posts:read/);
    const refused = await t.app.inject({ url: '/api/posts?status=draft' });
    assert.equal(refused.statusCode, 422);
    assert.ok((refused.json() as { errors: Record<string, unknown> }).errors.status);
    const settings = doc.paths['/api/settings']?.get?.responses['200']?.content?.['application/json']?.schema;
    const data = ((settings?.properties as Record<string, Schema> | undefined)?.data?.properties ?? {}) as Record<string, Schema>;
    assert.equal(data.posts_per_page?.type, 'integer');
    assert.equal(data.home_api_card?.type, 'boolean');
    // Saved as text in the panel, still the declared integer.
    await t.app.services.settings.put('posts_per_page', '10', true);
    const answer = await t.app.inject({ url: '/api/settings' });
    assert.equal((answer.json() as { data: { posts_per_page: unknown } }).data.posts_per_page, 10);
    assertDocumented('/api/settings', 'get', answer, 'posts_per_page saved as text');
  });

  it('marks query parameters that have a default as optional', () => {
    const parameters = doc.paths['/api/posts']?.get?.parameters ?? [];
    const byName = Object.fromEntries(parameters.map((p) => [p.name, p]));
    for (const name of ['locale', 'page', 'per_page', 'status']) assert.equal(byName[name]?.required, false, name);
    assert.equal(byName.per_page?.schema.default, 15);
    assert.equal(byName.per_page?.schema.maximum, 100);
  });
});

describe('/docs', () => {
  let t: TestApp;
  before(async () => {
    t = await buildStatefulApp({});
  });
  after(() => t.close());

  it('answers HTML that loads only assets served by this app', async () => {
    const response = await t.app.inject({ url: '/docs' });
    assert.equal(response.statusCode, 200);
    assert.match(String(response.headers['content-type']), /^text\/html/);
    const assets = [...response.body.matchAll(/(?:src|href)="([^"]+)"/g)].map((m) => m[1] ?? '');
    assert.ok(assets.some((a) => a.endsWith('swagger-ui-bundle.js')), 'the Swagger UI bundle is loaded');
    for (const asset of assets) {
      assert.doesNotMatch(asset, /^(https?:)?\/\//, `${asset} is not local`);
      const url = new URL(asset, 'http://localhost/docs').pathname;
      const loaded = await t.app.inject({ url });
      assert.equal(loaded.statusCode, 200, url);
    }
    assert.doesNotMatch(response.body, /<script>|<script [^>]*>[^<\s]/, 'no inline script');
  });

  it('links a dark-mode stylesheet of its own that applies only when the browser prefers dark', async () => {
    const page = await t.app.inject({ url: '/docs' });
    assert.match(page.body, /<link rel="stylesheet" type="text\/css" href="[^"]*\/theme\/docs-dark\.css"/);
    const css = await t.app.inject({ url: '/docs/static/theme/docs-dark.css' });
    assert.equal(css.statusCode, 200);
    assert.match(String(css.headers['content-type']), /^text\/css/);
    assert.match(css.body, /@media \(prefers-color-scheme: dark\)/);
    assert.doesNotMatch(css.body, /url\(|@import/, 'loads nothing');
  });

  it('keeps the site CSP (script-src and style-src self only) on the page', async () => {
    const response = await t.app.inject({ url: '/docs' });
    const csp = String(response.headers['content-security-policy']);
    assert.match(csp, /script-src 'self'(;|$)/);
    assert.match(csp, /style-src 'self'(;|$)/);
  });

  it('shows the same document as /api/openapi.json', async () => {
    const ui = await t.app.inject({ url: '/docs/json' });
    const api = await t.app.inject({ url: '/api/openapi.json' });
    assert.deepEqual(ui.json(), api.json());
  });
});
