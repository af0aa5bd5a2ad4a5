// Property-based fuzzing of every form action (POST routes outside /api, found from the app so
// new forms are covered), as a guest, a logged-in user and a panel administrator: generated
// fields of every wrong type, keys named like Object.prototype's members, huge and deep bodies,
// invalid UTF-8, wrong content types, odd headers, with a valid, a missing or a forged CSRF
// token. Whatever comes in: no 5xx, the JSON envelope when JSON was asked for and an error page
// otherwise, and a refused request changes nothing in the database.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import fc from 'fast-check';
import type { InjectOptions } from 'fastify';
import { createUser, type TestApp } from '../helpers.js';
import { WebClient } from '../support/client.js';
import { anyValue, asText, contentTypes, encode, NASTY_STRINGS, oddHeaders, prototypeKeyFields, queryStrings, rawBodies } from './arbitraries.js';
import { buildAppWithRoutes, diffSnapshots, figures, fillPath, isApiRoute, isErrorEnvelope, isUnsafe, snapshotDatabase, type RouteInfo, type Snapshot } from '../security/support.js';

const RUNS = Math.max(100, Math.round((Number(process.env.FUZZ_RUNS ?? '') || 1000) * 0.6));
const PASSWORD = 'form fuzzing 4 ever';
const EMAIL = '@@EMAIL@@';
const PASS = '@@PASSWORD@@';
const ID = '@@ID@@';

const GUARD_REDIRECTS = ['/login', '/admin/login', '/dashboard', '/admin', '/email/verify'];

type Who = 'guest' | 'user' | 'admin';
type Csrf = 'valid' | 'missing' | 'forged' | 'other-session';
type Body = { kind: 'form'; value: Record<string, unknown> } | { kind: 'json'; value: Record<string, unknown> } | { kind: 'raw'; label: string; value: string | Buffer };

const FIELDS = ['email', 'password', 'password_confirmation', 'current_password', 'name', 'remember', 'token', 'title', 'slug', 'body', 'excerpt', 'status', 'locale', 'published_at', 'key', 'value', 'is_public', 'is_admin', 'verified', 'abilities', 'id', 'user_id', '_method', 'redirect', 'intended'];

const fieldValue = fc.oneof(
  { weight: 3, arbitrary: anyValue },
  { weight: 2, arbitrary: fc.constantFrom<unknown>(EMAIL, PASS, ID, 'on', '1', 'published', 'draft', 'en', 'site_name', '"x"', 'https://evil.example/', '//evil.example') },
);

// A form's fields plus keys named like Object.prototype's members (unknown fields: ignored),
// with values of every kind.
const withPrototypeKeys = fc
  .tuple(fc.dictionary(fc.constantFrom(...FIELDS), fieldValue, { maxKeys: 4 }), prototypeKeyFields)
  .map(([fields, extra]) => ({ ...fields, ...extra }));

const bodyArb: fc.Arbitrary<Body> = fc.oneof(
  { weight: 6, arbitrary: fc.dictionary(fc.constantFrom(...FIELDS), fieldValue, { maxKeys: 6 }).map((value): Body => ({ kind: 'form', value })) },
  { weight: 1, arbitrary: fc.dictionary(fc.constantFrom(...FIELDS), fieldValue, { maxKeys: 6 }).map((value): Body => ({ kind: 'json', value })) },
  { weight: 2, arbitrary: withPrototypeKeys.map((value): Body => ({ kind: 'form', value })) },
  { weight: 1, arbitrary: withPrototypeKeys.map((value): Body => ({ kind: 'json', value })) },
  { weight: 2, arbitrary: rawBodies.map(([label, value]): Body => ({ kind: 'raw', label, value })) },
);

type Input = { route: RouteInfo; who: Who; csrf: Csrf; param: string; query: string; headers: Record<string, string>; contentType: string | null; json: boolean; body: Body };

/** What the web layer reads as a script's request (plugins/web-guard.ts wantsJson). */
function wantsJson(headers: NonNullable<InjectOptions['headers']>): boolean {
  return String(headers.accept ?? '').includes('application/json') || headers['x-requested-with'] === 'XMLHttpRequest';
}

describe('fuzzing the form actions', () => {
  let t: TestApp;
  let routes: RouteInfo[];
  const clients: Record<Who, WebClient | null> = { guest: null, user: null, admin: null };
  const people = { user: { id: 0, email: '' }, admin: { id: 0, email: '' } };
  let baseline: Snapshot;
  const hashes = new Map<number, string>();
  const stats = { inputs: 0, '2xx': 0, '3xx': 0, '4xx': 0, '5xx': 0, 'database changes on refusal': 0 };

  // After an accepted request (someone may have logged out, changed a password, been deleted or
  // demoted by the panel), the accounts and the three clients are put back.
  const refresh = async () => {
    // Work an accepted form started after its answer (a reset link is written and mailed once
    // the page is out) lands before the new baseline, not in the next refusal's snapshot.
    await t.app.services.mail.settled();
    for (const who of ['user', 'admin'] as const) {
      const person = people[who];
      let row = person.id === 0 ? undefined : await t.app.services.users.findById(person.id);
      if (row === undefined) {
        const created = await createUser(t.app, { password: PASSWORD, admin: who === 'admin', name: who });
        person.id = created.id;
        row = (await t.app.services.users.findById(created.id))!;
      }
      await t.db.kysely.updateTable('users').set({ is_admin: who === 'admin' ? 1 : 0, email_verified_at: row.email_verified_at ?? new Date().toISOString() }).where('id', '=', person.id).execute();
      person.email = row.email;
      // Comparing hashes, not verifying: an argon2 run per accepted post would dominate the run.
      if (row.password !== hashes.get(person.id)) {
        await t.app.services.users.setPassword(person.id, PASSWORD);
        hashes.set(person.id, (await t.app.services.users.findById(person.id))!.password ?? '');
      }
    }
    // Each client is rebuilt only when it lost its state (logged out, or a guest that logged in).
    if (clients.guest === null || (await clients.guest.get('/dashboard')).statusCode !== 302) {
      clients.guest = new WebClient(t.app, { remoteAddress: '10.9.0.1' });
    }
    await clients.guest.get('/login');
    if (clients.user === null || (await clients.user.get('/profile')).statusCode !== 200) {
      const user = new WebClient(t.app, { remoteAddress: '10.9.0.2' });
      await user.get('/login');
      assert.equal((await user.post('/login', { email: people.user.email, password: PASSWORD })).statusCode, 303);
      await user.get('/profile');
      clients.user = user;
    }
    if (clients.admin === null || (await clients.admin.get('/admin/posts/new')).statusCode !== 200) {
      const admin = new WebClient(t.app, { remoteAddress: '10.9.0.3' });
      await admin.get('/admin/login');
      assert.equal((await admin.post('/admin/login', { email: people.admin.email, password: PASSWORD })).statusCode, 303);
      await admin.get('/admin/posts/new');
      clients.admin = admin;
    }
    // The sign-ins above record their device after the answer (new-device alerts): that too
    // lands before the baseline.
    await t.app.services.mail.settled();
    baseline = await snapshotDatabase(t.db);
  };

  before(async () => {
    ({ t, routes } = await buildAppWithRoutes());
    await refresh();
  });
  after(() => t.close());

  const resolve = (text: string) => text.replaceAll(EMAIL, people.user.email).replaceAll(PASS, PASSWORD).replaceAll(ID, String(people.user.id));

  function requestFor(input: Input): InjectOptions {
    const client = clients[input.who]!;
    const path = fillPath(input.route.url, () => resolve(input.param));
    const url = input.query === '' ? path : `${path}?${input.query}`;
    const headers: Record<string, string> = { ...input.headers, cookie: client.cookieHeader() };
    if (input.json) headers.accept = 'application/json';
    const token = input.csrf === 'valid' ? client.csrf : input.csrf === 'forged' ? 'forged-token' : input.csrf === 'other-session' ? clients[input.who === 'guest' ? 'user' : 'guest']!.csrf : null;
    let payload: string | Buffer;
    let contentType: string;
    if (input.body.kind === 'raw') {
      payload = input.body.value;
      contentType = input.contentType ?? 'application/x-www-form-urlencoded';
      if (token !== null) headers['x-csrf-token'] = token;
    } else {
      const fields = Object.fromEntries(Object.entries(input.body.value).map(([key, value]) => [key, typeof value === 'string' ? resolve(value) : value]));
      if (token !== null) fields._token = token;
      if (input.body.kind === 'json') {
        payload = JSON.stringify(fields);
        contentType = input.contentType ?? 'application/json';
      } else {
        payload = Object.entries(fields)
          .map(([key, value]) => `${encode(key)}=${encode(asText(value))}`)
          .join('&');
        contentType = input.contentType ?? 'application/x-www-form-urlencoded';
      }
    }
    headers['content-type'] = contentType;
    return { method: input.route.method as 'POST', url, headers, payload, remoteAddress: `10.8.${Math.floor(Math.random() * 250)}.${Math.floor(Math.random() * 250)}` };
  }

  // The degenerate bodies every form meets sooner or later, tried on every form as every role:
  // each must be answered exactly as an empty form is (so a refusal stays a refusal), and never
  // with a 5xx. Found by the fuzzer: an empty JSON post to /admin/posts answered 500, and an
  // empty text/plain post to /profile passed validation and blanked the user's name and email.
  it('answers every form action given an empty, absent or non-object body as it answers an empty form', async () => {
    const forms = routes.filter((route) => !isApiRoute(route) && isUnsafe(route.method));
    const bodies: Array<[string, string | undefined]> = [
      ['application/json', ''],
      ['application/json', 'null'],
      ['application/json', '[]'],
      ['application/json', '"text"'],
      ['application/json', '1'],
      ['text/plain', ''],
      ['text/plain', 'name=x'],
      ['', undefined],
    ];
    const post = async (route: RouteInfo, who: Who, contentType: string, payload: string | undefined) => {
      const client = clients[who]!;
      const headers: Record<string, string> = { cookie: client.cookieHeader(), 'x-csrf-token': client.csrf ?? '' };
      if (contentType !== '') headers['content-type'] = contentType;
      const url = fillPath(route.url, () => String(people.user.id));
      // A fresh address each time: the login throttles count per address.
      const remoteAddress = `10.7.${Math.floor(Math.random() * 250)}.${Math.floor(Math.random() * 250)}`;
      const response = await t.app.inject({ method: route.method as 'POST', url, headers, remoteAddress, ...(payload === undefined ? {} : { payload }) });
      if (response.statusCode < 400 && !(response.statusCode === 302 && GUARD_REDIRECTS.includes(String(response.headers.location)))) await refresh();
      return { status: response.statusCode, where: `${route.method} ${url} as ${who} with ${contentType || 'no'} body ${JSON.stringify(payload)}` };
    };
    let tried = 0;
    for (const route of forms) {
      for (const who of ['guest', 'user', 'admin'] as const) {
        const empty = await post(route, who, 'application/x-www-form-urlencoded', '');
        for (const [contentType, payload] of bodies) {
          const answer = await post(route, who, contentType, payload);
          tried += 1;
          assert.ok(answer.status < 500, `${answer.status} for ${answer.where}`);
          assert.equal(answer.status, empty.status, `${answer.where}: answered as an empty form would be`);
        }
      }
    }
    assert.ok(tried >= forms.length * 3 * bodies.length);
  });

  it(`answers ${RUNS} generated hostile form posts with no 5xx, the envelope or an error page on every refusal, and no change after a refusal`, async () => {
    const forms = routes.filter((route) => !isApiRoute(route) && isUnsafe(route.method));
    assert.ok(forms.length >= 8, `expected the form actions, found ${forms.map((r) => `${r.method} ${r.url}`).join(', ')}`);
    const inputArb: fc.Arbitrary<Input> = fc.record({
      route: fc.constantFrom(...forms),
      who: fc.constantFrom<Who>('guest', 'user', 'admin'),
      csrf: fc.oneof({ weight: 6, arbitrary: fc.constant<Csrf>('valid') }, { weight: 1, arbitrary: fc.constantFrom<Csrf>('missing', 'forged', 'other-session') }),
      param: fc.oneof(fc.constant(ID), fc.constantFrom(...NASTY_STRINGS), fc.constantFrom('1', '999999', '-1', '0')),
      query: fc.oneof({ weight: 4, arbitrary: fc.constant('') }, { weight: 1, arbitrary: queryStrings }),
      headers: oddHeaders.map((headers) => {
        const { cookie: _cookie, ...rest } = headers;
        return rest;
      }),
      contentType: fc.oneof({ weight: 7, arbitrary: fc.constant(null) }, { weight: 2, arbitrary: contentTypes }),
      json: fc.boolean(),
      body: bodyArb,
    });

    await fc.assert(
      fc.asyncProperty(inputArb, async (input) => {
        const request = requestFor(input);
        const response = await t.app.inject(request);
        stats.inputs += 1;
        const klass = `${Math.floor(response.statusCode / 100)}xx` as '2xx';
        stats[klass] = (stats[klass] ?? 0) + 1;
        const context = () =>
          `${response.statusCode} ${response.body.slice(0, 200)} for ${JSON.stringify({ ...input, body: input.body.kind === 'raw' ? input.body.label : input.body }).slice(0, 1500)}`;
        assert.ok(response.statusCode < 500, `5xx: ${context()}`);
        // A guard's redirect (to a login page, or a logged-in visitor away from a guest form)
        // is a refusal too; a form's success is a 303.
        const guarded = response.statusCode === 302 && GUARD_REDIRECTS.includes(String(response.headers.location));
        if (response.statusCode >= 400) {
          // A script (Accept: application/json, or XMLHttpRequest) gets the envelope, a browser
          // the error page (plain text for Fastify's failures before routing, which has no views).
          // The panel's forms show their errors on the page, to a script too.
          const type = String(response.headers['content-type']);
          const envelope = /^application\/json/.test(type) && isErrorEnvelope(response.body);
          const page = /^text\/html/.test(type) ? /^<!doctype html>/i.test(response.body) : /^text\/plain/.test(type) && [400, 414].includes(response.statusCode);
          if (!wantsJson(request.headers ?? {})) assert.ok(page, `not an error page: ${type} ${context()}`);
          else if (input.route.url.startsWith('/admin/')) assert.ok(envelope || page, `neither the envelope nor a page: ${type} ${context()}`);
          else assert.ok(envelope, `not the error envelope: ${context()}`);
        }
        if (response.statusCode >= 400 || guarded) {
          const changes = diffSnapshots(baseline, await snapshotDatabase(t.db));
          if (changes.length > 0) stats['database changes on refusal'] += 1;
          assert.deepEqual(changes, [], `a refused form post changed the database: ${context()}`);
        } else {
          await refresh();
        }
      }),
      { numRuns: RUNS },
    );
    assert.equal((await t.app.inject({ url: '/up' })).statusCode, 200, 'the app still answers afterwards');
    figures('fuzz forms', { inputs: stats.inputs, routes: forms.length, ...Object.fromEntries(Object.entries(stats).filter(([key]) => key !== 'inputs')) });
  });
});
