// Property-based fuzzing of every /api route (found from the app itself, so new routes are
// covered): wrong types, missing and extra fields, keys named like Object.prototype's members
// (in bodies and query strings), huge and deep bodies, invalid UTF-8, wrong content types, odd
// headers, traversal and injection strings in slugs and query parameters.
// Whatever comes in: no 5xx, the error envelope on every failure, and a refused request
// changes nothing in the database. FUZZ_RUNS=<n> runs more inputs (default keeps it short).
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import fc from 'fast-check';
import type { InjectOptions } from 'fastify';
import type { TestApp } from '../helpers.js';
import { createUser } from '../helpers.js';
import { anyString, anyValue, asText, contentTypes, encode, NASTY_STRINGS, oddHeaders, prototypeKeyFields, queryStrings, rawBodies } from './arbitraries.js';
import {
  buildAppWithRoutes,
  diffSnapshots,
  figures,
  isApiRoute,
  isErrorEnvelope,
  snapshotDatabase,
  type RouteInfo,
  type Snapshot,
} from '../security/support.js';

const RUNS = Number(process.env.FUZZ_RUNS ?? '') || 1000;
const PASSWORD = 'fuzzing is fun 42';

// Placeholders resolved at request time, since the accounts and posts they name may change
// (an accepted request can rename a user or delete a post).
const EMAIL = '@@EMAIL@@';
const PASS = '@@PASSWORD@@';
const SLUG = '@@SLUG@@';
const DRAFT = '@@DRAFT@@';

const FIELDS = [
  'email',
  'password',
  'device_name',
  'name',
  'current_password',
  'password_confirmation',
  'title',
  'slug',
  'excerpt',
  'body',
  'locale',
  'status',
  'published_at',
  'is_admin',
  'id',
  'user_id',
  'author_id',
  'abilities',
  'email_verified_at',
  'remember_token',
  '_token',
];

const fieldValue = fc.oneof(
  { weight: 3, arbitrary: anyValue },
  { weight: 2, arbitrary: fc.constantFrom<unknown>(EMAIL, PASS, SLUG, DRAFT, 'A title', 'fuzz device', 'published', 'draft', 'en', '2020-01-01T00:00:00Z', ['*'], 1) },
);

type Auth = 'none' | 'alice' | 'admin' | 'reader' | 'writer' | 'garbage';

type Body =
  | { kind: 'none' }
  | { kind: 'fields'; value: Record<string, unknown> }
  | { kind: 'json'; value: unknown }
  | { kind: 'raw'; label: string; value: string | Buffer };

const bodyArb: fc.Arbitrary<Body> = fc.oneof(
  { weight: 1, arbitrary: fc.constant<Body>({ kind: 'none' }) },
  { weight: 6, arbitrary: fc.dictionary(fc.constantFrom(...FIELDS), fieldValue, { maxKeys: 6 }).map((value): Body => ({ kind: 'fields', value })) },
  // A route's fields plus keys named like Object.prototype's members (an unknown field: ignored,
  // or a 400 for the two prototype-pollution shapes), with values of every kind.
  {
    weight: 2,
    arbitrary: fc
      .tuple(fc.dictionary(fc.constantFrom(...FIELDS), fieldValue, { maxKeys: 4 }), prototypeKeyFields)
      .map(([fields, extra]): Body => ({ kind: 'fields', value: { ...fields, ...extra } })),
  },
  { weight: 1, arbitrary: fc.jsonValue({ maxDepth: 4 }).map((value): Body => ({ kind: 'json', value })) },
  { weight: 2, arbitrary: rawBodies.map(([label, value]): Body => ({ kind: 'raw', label, value })) },
);

const slugArb = fc.oneof(
  { weight: 2, arbitrary: fc.constantFrom(SLUG, DRAFT) },
  { weight: 3, arbitrary: fc.constantFrom(...NASTY_STRINGS) },
  { weight: 1, arbitrary: anyString },
);

const RAW_PATHS = [
  '/api/posts/../user',
  '/api/posts/%2e%2e/user',
  '/api/posts/..%2f..%2fuser',
  '/api//posts',
  '/api/posts/',
  '/api/posts/%FF%FE',
  '/api/posts/%C0%AF',
  '/api/posts/a%00b',
  '/api/posts/%',
  `/api/posts/${'a'.repeat(5000)}`,
  '/api/user/',
  '/api/USER',
  '/api/tokens/current/../../user',
  '/api/nothing-here',
  '/api',
  '/api/',
  '/api/%2e%2e/%2e%2e/etc/passwd',
  '/api/posts?page=1&page=2',
];

/** null (the route's own method, path, content type) most of the time, else a twist. */
const rarely = <T>(arbitrary: fc.Arbitrary<T>, weight = 1): fc.Arbitrary<T | null> =>
  fc.oneof({ weight: 10 - weight, arbitrary: fc.constant(null) }, { weight, arbitrary });

type Input = {
  route: RouteInfo;
  method: string | null;
  rawPath: string | null;
  slug: string;
  query: string;
  auth: Auth;
  headers: Record<string, string>;
  contentType: string | null;
  body: Body;
};

describe('fuzzing the JSON API', () => {
  let t: TestApp;
  let routes: RouteInfo[];
  const tokens: Record<Exclude<Auth, 'none' | 'garbage'>, string> = { alice: '', admin: '', reader: '', writer: '' };
  let alice: { id: number; email: string };
  let admin: { id: number; email: string };
  let slug = '';
  let draft = '';
  let baseline: Snapshot;
  const stats = { inputs: 0, '2xx': 0, '3xx': 0, '4xx': 0, '5xx': 0, 'envelope failures': 0, 'database changes on refusal': 0 };

  const insertPost = async (status: 'published' | 'draft') => {
    const now = new Date().toISOString();
    const row = await t.db.kysely
      .insertInto('posts')
      .values({
        author_id: admin.id,
        title: `Fuzz ${status}`,
        slug: `fuzz-${status}-${Math.random().toString(36).slice(2, 8)}`,
        excerpt: 'e',
        body: '# b',
        locale: 'en',
        status,
        published_at: status === 'published' ? new Date(Date.now() - 60_000).toISOString() : null,
        created_at: now,
        updated_at: now,
      })
      .returning('slug')
      .executeTakeFirstOrThrow();
    return row.slug;
  };

  // After an accepted request the fixtures are put back: tokens re-issued if they were revoked,
  // passwords reset, posts re-created; then a new baseline is taken.
  const refresh = async () => {
    const issue = async (userId: number, abilities: string[], current: string) => {
      if (current !== '' && (await t.app.services.tokens.authenticate(t.app.services.tokens.parse(current))) !== null) return current;
      const { plaintext } = await t.app.services.tokens.issue(userId, 'fuzz', abilities);
      await t.app.services.tokens.authenticate(t.app.services.tokens.parse(plaintext)); // first use stamps last_used_at now
      return plaintext;
    };
    const writer = await createUserOnce('writer');
    tokens.alice = await issue(alice.id, ['*'], tokens.alice);
    tokens.admin = await issue(admin.id, ['*'], tokens.admin);
    tokens.reader = await issue(admin.id, ['posts:read'], tokens.reader);
    tokens.writer = await issue(writer, ['posts:write'], tokens.writer);
    for (const user of [alice, admin]) {
      const row = await t.app.services.users.findById(user.id);
      assert.ok(row, 'a fixture user disappeared');
      user.email = row.email;
      // Comparing hashes, not verifying: an argon2 run per accepted request would be the slowest part.
      if (row.password !== passwordHashes.get(user.id)) {
        await t.app.services.users.setPassword(user.id, PASSWORD);
        passwordHashes.set(user.id, (await t.app.services.users.findById(user.id))?.password ?? '');
      }
    }
    if ((await t.app.services.posts.findPublished(slug)) === undefined) slug = await insertPost('published');
    const draftRow = await t.app.services.posts.findAny(draft);
    if (draftRow === undefined || draftRow.status !== 'draft') draft = await insertPost('draft');
    // Posts created by accepted requests go, so the snapshot (taken after each request) stays small.
    await t.db.kysely.deleteFrom('posts').where('slug', 'not in', [slug, draft]).execute();
    // A token issued by an accepted request records its device after the answer (new-device
    // alerts): that lands before the baseline, not in the next refusal's snapshot.
    await t.app.services.mail.settled();
    baseline = await snapshotDatabase(t.db);
  };

  const passwordHashes = new Map<number, string>();
  let writerId: number | null = null;
  const createUserOnce = async (_: 'writer') => {
    writerId ??= (await createUser(t.app, { password: PASSWORD })).id;
    return writerId;
  };

  before(async () => {
    ({ t, routes } = await buildAppWithRoutes());
    const a = await createUser(t.app, { password: PASSWORD, name: 'Alice' });
    const b = await createUser(t.app, { password: PASSWORD, name: 'Admin', admin: true });
    alice = { id: a.id, email: a.email };
    admin = { id: b.id, email: b.email };
    slug = await insertPost('published');
    draft = await insertPost('draft');
    await refresh();
  });
  after(() => t.close());

  const resolve = (text: string): string =>
    text.replaceAll(EMAIL, alice.email).replaceAll(PASS, PASSWORD).replaceAll(SLUG, slug).replaceAll(DRAFT, draft);
  const resolveValue = (value: unknown): unknown => {
    if (typeof value === 'string') return resolve(value);
    if (Array.isArray(value)) return value.map(resolveValue);
    return value;
  };

  function requestFor(input: Input): InjectOptions {
    const method = (input.method ?? input.route.method) as InjectOptions['method'];
    const path = input.rawPath ?? input.route.url.replace(/:([A-Za-z0-9_]+)/g, () => encode(resolve(input.slug)));
    const url = input.query === '' ? path : `${path}${path.includes('?') ? '&' : '?'}${input.query}`;
    const headers: Record<string, string> = { ...input.headers };
    if (input.auth === 'garbage') headers.authorization = 'Bearer 1|garbage';
    else if (input.auth !== 'none') headers.authorization = `Bearer ${tokens[input.auth]}`;
    let payload: string | Buffer | undefined;
    const body = input.body;
    if (body.kind === 'fields') {
      const fields = Object.fromEntries(Object.entries(body.value).map(([key, value]) => [key, resolveValue(value)]));
      payload =
        input.contentType === 'application/x-www-form-urlencoded'
          ? new URLSearchParams(Object.entries(fields).map(([key, value]) => [key, asText(value)])).toString()
          : JSON.stringify(fields);
    } else if (body.kind === 'json') payload = JSON.stringify(body.value);
    else if (body.kind === 'raw') payload = body.value;
    if (payload !== undefined) headers['content-type'] = input.contentType ?? 'application/json';
    return { method, url, headers, ...(payload === undefined ? {} : { payload }) };
  }

  const describeInput = (input: Input, request: InjectOptions) =>
    JSON.stringify({ ...input, body: input.body.kind === 'raw' ? input.body.label : input.body, request: { method: request.method, url: String(request.url).slice(0, 200) } }).slice(0, 2000);

  it(`answers ${RUNS} generated hostile requests with no 5xx, the envelope on every failure and no change after a refusal`, async () => {
    const apiRoutes = routes.filter(isApiRoute);
    assert.ok(apiRoutes.length >= 9, `expected the API's routes, found ${apiRoutes.map((r) => `${r.method} ${r.url}`).join(', ')}`);
    const inputArb: fc.Arbitrary<Input> = fc.record({
      route: fc.constantFrom(...apiRoutes),
      method: rarely(fc.constantFrom('GET', 'POST', 'PUT', 'PATCH', 'DELETE')),
      rawPath: rarely(fc.constantFrom(...RAW_PATHS)),
      slug: slugArb,
      query: queryStrings,
      auth: fc.constantFrom<Auth>('none', 'alice', 'admin', 'reader', 'writer', 'garbage'),
      headers: oddHeaders,
      contentType: rarely(contentTypes, 3),
      body: bodyArb,
    });

    await fc.assert(
      fc.asyncProperty(inputArb, async (input) => {
        const request = requestFor(input);
        const response = await t.app.inject(request);
        stats.inputs += 1;
        const klass = `${Math.floor(response.statusCode / 100)}xx` as '2xx';
        stats[klass] = (stats[klass] ?? 0) + 1;
        const context = () => `${response.statusCode} ${response.body.slice(0, 300)} for ${describeInput(input, request)}`;
        assert.ok(response.statusCode < 500, `5xx: ${context()}`);
        // light-my-request resolves dot segments like a browser would ("/api/%2e%2e/x" is
        // "/x"), so what counts is the path the app received (raw paths: test/security/paths).
        const underApi = /^\/api(\/|$|\?)/.test(new URL(String(request.url), 'http://localhost').pathname);
        if (response.statusCode >= 400 && underApi) {
          const envelope = isErrorEnvelope(response.body) && /^application\/json/.test(String(response.headers['content-type']));
          if (!envelope) stats['envelope failures'] += 1;
          assert.ok(envelope, `not the error envelope: ${context()}`);
        }
        if (response.statusCode >= 400) {
          const changes = diffSnapshots(baseline, await snapshotDatabase(t.db));
          if (changes.length > 0) stats['database changes on refusal'] += 1;
          assert.deepEqual(changes, [], `a refused request changed the database: ${context()}`);
        } else {
          await refresh();
        }
      }),
      { numRuns: RUNS },
    );
    const up = await t.app.inject({ url: '/up' });
    assert.equal(up.statusCode, 200, 'the app still answers afterwards');
    figures('fuzz api', { inputs: stats.inputs, routes: apiRoutes.length, ...Object.fromEntries(Object.entries(stats).filter(([key]) => key !== 'inputs')) });
  });

  it('refuses a body field of the wrong JSON type on every route with a body (no coercion), changing nothing', async () => {
    const withBodies = routes.filter((route) => isApiRoute(route) && Object.keys(route.bodyFields).length > 0);
    assert.ok(withBodies.length >= 5, 'the routes with a body were found');
    let tried = 0;
    for (const route of withBodies) {
      for (const [field, types] of Object.entries(route.bodyFields)) {
        const wrong: unknown[] = [];
        if (!types.includes('string')) wrong.push('text');
        if (!types.includes('integer') && !types.includes('number')) wrong.push(123, 1.5);
        if (!types.includes('boolean')) wrong.push(true);
        if (!types.includes('array')) wrong.push(['x']);
        if (!types.includes('object')) wrong.push({ a: 'x' });
        for (const value of wrong) {
          const request = requestFor({
            route,
            method: null,
            rawPath: null,
            slug: DRAFT,
            query: '',
            auth: 'admin',
            headers: {},
            contentType: null,
            body: { kind: 'json', value: { [field]: value } },
          });
          const response = await t.app.inject(request);
          tried += 1;
          assert.equal(response.statusCode, 422, `${route.method} ${route.url} ${field}=${JSON.stringify(value)}: ${response.body}`);
          assert.ok((response.json() as { errors: Record<string, string[]> }).errors[field], `${field} is named in errors: ${response.body}`);
          assert.deepEqual(diffSnapshots(baseline, await snapshotDatabase(t.db)), []);
        }
      }
    }
    figures('fuzz wrong types', { inputs: tried, '5xx': 0 });
  });
});
