// Account enumeration: POST /api/tokens, POST /login and POST /forgot-password answer an
// unknown and a known address alike (byte for byte for the API; for pages once the CSRF token
// and the echoed address are taken out), and in the same time: the medians of 200 alternating
// tries differ by at most 20% (the one timed assertion of the suite, which issue 6 asks for).
// With verification on, registering a taken address answers like a new registration and mails
// the owner instead. Its apps hash at OWASP's cost, as a server does (test apps hash cheaply).
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { after, before, describe, it } from 'node:test';
import type { LightMyRequestResponse } from 'fastify';
import { buildTestApp, createUser, OWASP_ARGON_COST, type TestApp } from '../helpers.js';
import { WebClient } from '../support/client.js';
import { startMailServer, type MailServer } from '../web/mail-server.js';
import { figures } from './support.js';

const run = promisify(execFile);
const TRIES = 200;
const MAX_RATIO = 1.2;

const median = (values: number[]): number => {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? sorted[middle]! : (sorted[middle - 1]! + sorted[middle]!) / 2;
};

/**
 * Runs `tries` requests alternating known/unknown (after a warm-up) and returns the medians.
 * Each call gets its try number, so callers can vary the address or the client IP.
 */
async function timeAlternating(
  send: (known: boolean, i: number) => Promise<LightMyRequestResponse>,
  check: (response: LightMyRequestResponse, known: boolean) => void,
): Promise<{ known: number; unknown: number; ratio: number }> {
  for (let i = 0; i < 6; i += 1) check(await send(i % 2 === 0, -1 - i), i % 2 === 0);
  const times = { known: [] as number[], unknown: [] as number[] };
  for (let i = 0; i < TRIES; i += 1) {
    // Alternating, and swapping which goes first every other pair, so drift hits both alike.
    const known = (i % 2 === 0) !== (Math.floor(i / 2) % 2 === 1);
    const start = process.hrtime.bigint();
    const response = await send(known, i);
    const elapsed = Number(process.hrtime.bigint() - start) / 1e6;
    check(response, known);
    times[known ? 'known' : 'unknown'].push(elapsed);
  }
  const result = { known: median(times.known), unknown: median(times.unknown) };
  return { ...result, ratio: Math.max(result.known, result.unknown) / Math.min(result.known, result.unknown) };
}

/**
 * Up to ROUNDS measurements, stopping at the first within the limit. On a shared machine a
 * scheduler hiccup can skew one round of millisecond medians; a real difference (the 2x that
 * the forgot-password upsert once caused) fails every round.
 */
const ROUNDS = 3;
async function withinLimit<T extends { known: number; unknown: number }>(measure: () => Promise<T>): Promise<T & { ratio: number; rounds: number }> {
  let last: T & { ratio: number; rounds: number } = { known: 0, unknown: 0, ratio: Infinity, rounds: 0 } as T & { ratio: number; rounds: number };
  for (let round = 1; round <= ROUNDS; round += 1) {
    const result = await measure();
    last = { ...result, ratio: Math.max(result.known, result.unknown) / Math.min(result.known, result.unknown), rounds: round };
    if (last.ratio <= MAX_RATIO) break;
  }
  return last;
}

const ip = (i: number) => `10.${(i >> 16) & 255}.${(i >> 8) & 255}.${i & 255}`;
const ms = (value: number) => `${value.toFixed(2)} ms`;

/** A page's HTML without what legitimately differs between two answers: the CSRF token, the typed address. */
function normalizePage(html: string, email: string): string {
  return html
    .replace(/name="_token" value="[^"]*"/g, 'name="_token" value="CSRF"')
    .replace(/<meta name="csrf-token" content="[^"]*"/g, '<meta name="csrf-token" content="CSRF"')
    .replaceAll(email, 'EMAIL');
}

/** The headers that describe an answer (names, and values except cookies and dates). */
function headerShape(response: LightMyRequestResponse): string {
  return Object.keys(response.headers)
    .filter((name) => !['date', 'content-length'].includes(name))
    .sort()
    .map((name) => (name === 'set-cookie' ? `${name}: (${[response.headers[name]].flat().length})` : `${name}: ${String(response.headers[name])}`))
    .join('\n');
}

describe('enumeration: POST /api/tokens', () => {
  let t: TestApp;
  let known: string;
  before(async () => {
    t = await buildTestApp(OWASP_ARGON_COST);
    known = (await createUser(t.app, { email: 'known-api@example.com' })).email;
  });
  after(() => t.close());

  const attempt = (email: string) =>
    t.app.inject({ method: 'POST', url: '/api/tokens', payload: { email, password: 'not the password', device_name: 'probe' } });

  it('answers an unknown and a known address (wrong password) byte for byte the same', async () => {
    const [a, b] = [await attempt('nobody-api@example.com'), await attempt(known)];
    assert.equal(a.statusCode, 401);
    assert.equal(a.statusCode, b.statusCode);
    assert.equal(a.body, b.body);
    assert.equal(a.body, '{"message":"The provided credentials are incorrect.","errors":{}}');
    assert.equal(headerShape(a), headerShape(b));
  });

  it(`takes the same time for both: medians of ${TRIES} alternating tries within 20%`, async () => {
    const expected = (await attempt(known)).body;
    const result = await withinLimit(() =>
      timeAlternating(
        (isKnown) => attempt(isKnown ? known : 'nobody-api@example.com'),
        (response) => assert.equal(response.body, expected),
      ),
    );
    figures('enumeration api-tokens', { inputs: TRIES, 'known median': ms(result.known), 'unknown median': ms(result.unknown), ratio: result.ratio.toFixed(3), rounds: result.rounds });
    assert.ok(result.ratio <= MAX_RATIO, `medians ${ms(result.known)} (known) and ${ms(result.unknown)} (unknown) differ by more than 20%`);
  });
});

describe('enumeration: POST /login', () => {
  let t: TestApp;
  let known: string;
  before(async () => {
    t = await buildTestApp(OWASP_ARGON_COST);
    known = (await createUser(t.app, { email: 'known-login@example.com' })).email;
  });
  after(() => t.close());

  // Each try from its own address: the throttle (5 per email + IP) would otherwise answer 429
  // without checking the password, which is the point of a throttle but not of this test.
  const attempt = async (email: string, i: number) => {
    const client = new WebClient(t.app, { remoteAddress: ip(i + 1000) });
    await client.get('/login');
    return client.post('/login', { email, password: 'not the password' });
  };

  it('answers an unknown and a known address (wrong password) with the same page', async () => {
    const a = await attempt('nobody-login@example.com', 1);
    const b = await attempt(known, 2);
    assert.equal(a.statusCode, 422);
    assert.equal(a.statusCode, b.statusCode);
    assert.equal(normalizePage(a.body, 'nobody-login@example.com'), normalizePage(b.body, known));
    assert.equal(headerShape(a), headerShape(b));
  });

  it(`takes the same time for both: medians of ${TRIES} alternating tries within 20%`, async () => {
    // Only the POST is timed; the GET that gives the form its CSRF token is made first.
    const clients = new Map<number, WebClient>();
    const prepare = async (i: number) => {
      const client = new WebClient(t.app, { remoteAddress: ip(i + 5000) });
      await client.get('/login');
      clients.set(i, client);
    };
    let round = 0;
    const result = await withinLimit(async () => {
      round += 1;
      for (let i = -6; i < TRIES; i += 1) await prepare(i + round * 1000);
      return timeAlternating(
        (isKnown, i) => clients.get(i + round * 1000)!.post('/login', { email: isKnown ? known : 'nobody-login@example.com', password: 'not the password' }),
        (response) => assert.equal(response.statusCode, 422),
      );
    });
    figures('enumeration login', { inputs: TRIES, 'known median': ms(result.known), 'unknown median': ms(result.unknown), ratio: result.ratio.toFixed(3), rounds: result.rounds });
    assert.ok(result.ratio <= MAX_RATIO, `medians ${ms(result.known)} (known) and ${ms(result.unknown)} (unknown) differ by more than 20%`);
  });
});

describe('enumeration: POST /forgot-password (mail through a real SMTP server)', () => {
  let mail: MailServer;
  let t: TestApp;
  const knownAddresses: string[] = [];
  before(async () => {
    mail = await startMailServer();
    t = await buildTestApp({ ...OWASP_ARGON_COST, ...mail.env });
    // One account per try, so that every known try really writes a token and sends a mail
    // (a second request within a minute would do neither).
    const first = await createUser(t.app, { email: 'known-reset-0@example.com' });
    knownAddresses.push(first.email);
    const hash = (await t.app.services.users.findById(first.id))!.password;
    const now = new Date().toISOString();
    for (let i = 1; i <= ROUNDS * (TRIES / 2 + 4) + 8; i += 1) {
      const email = `known-reset-${i}@example.com`;
      await t.db.kysely
        .insertInto('users')
        .values({ name: `R ${i}`, email, password: hash, email_verified_at: now, is_admin: 0, remember_token: null, locale: null, created_at: now, updated_at: now })
        .execute();
      knownAddresses.push(email);
    }
  });
  after(async () => {
    await t.app.services.mail.settled();
    await t.close();
    await mail.close();
  });

  const attempt = (client: WebClient, email: string) => client.post('/forgot-password', { email });

  it('answers an unknown and a known address with the same redirect and the same page after it', async () => {
    const answers = [];
    for (const email of ['nobody-reset@example.com', knownAddresses[0]!]) {
      const client = new WebClient(t.app);
      await client.get('/forgot-password');
      const response = await attempt(client, email);
      const page = await client.follow(response);
      answers.push({ status: response.statusCode, location: response.headers.location, shape: headerShape(response), body: response.body, page: normalizePage(page.body, email) });
    }
    assert.equal(answers[0]!.status, 303);
    assert.deepEqual(answers[0], answers[1]);
    const delivered = await mail.waitFor(knownAddresses[0]!);
    assert.match(delivered.text, /reset-password/);
    assert.equal(mail.to('nobody-reset@example.com').length, 0);
  });

  it(`takes the same time for both, mail included: medians of ${TRIES} alternating tries within 20% (client in its own process)`, async () => {
    const client = new WebClient(t.app);
    await client.get('/forgot-password');
    const address = await t.app.listen({ port: 0, host: '127.0.0.1' });
    const form = (email: string) => new URLSearchParams({ email, _token: client.csrf ?? '' }).toString();
    const plan = {
      url: `${address}/forgot-password`,
      headers: { 'content-type': 'application/x-www-form-urlencoded', cookie: client.cookieHeader() },
      bodies: { known: knownAddresses.slice(1).map(form), unknown: knownAddresses.slice(1).map((_, i) => form(`nobody-${i}@example.com`)) },
      warmup: 6,
      tries: TRIES,
      // Long enough for the mail of a known address to reach the SMTP server on loopback.
      pauseMs: 100,
    };
    let round = 0;
    const result = await withinLimit(async () => {
      // Each round mails addresses that have not been mailed yet (one mail a minute per address).
      const offset = round * (TRIES / 2 + 4);
      round += 1;
      const bodies = { known: knownAddresses.slice(1 + offset, 1 + offset + TRIES / 2 + 4).map(form), unknown: plan.bodies.unknown };
      const { stdout } = await run(process.execPath, [new URL('./timing-client.mjs', import.meta.url).pathname, JSON.stringify({ ...plan, bodies })]);
      return JSON.parse(stdout) as { known: number; unknown: number; statuses: number[] };
    });
    await t.app.services.mail.settled();
    const ratio = result.ratio;
    figures('enumeration forgot-password', {
      inputs: TRIES,
      'known median': ms(result.known),
      'unknown median': ms(result.unknown),
      ratio: ratio.toFixed(3),
      rounds: result.rounds,
      'mails delivered': mail.messages.length,
    });
    assert.deepEqual(result.statuses, [303]);
    assert.ok(mail.messages.length >= TRIES / 2, 'the known addresses were mailed');
    assert.ok(ratio <= MAX_RATIO, `medians ${ms(result.known)} (known) and ${ms(result.unknown)} (unknown) differ by more than 20%`);
  });
});

describe('enumeration: POST /register with MUST_VERIFY_EMAIL=true', () => {
  let mail: MailServer;
  let t: TestApp;
  let owner: Awaited<ReturnType<typeof createUser>>;
  before(async () => {
    mail = await startMailServer();
    t = await buildTestApp({ ...OWASP_ARGON_COST, ...mail.env, MUST_VERIFY_EMAIL: 'true' });
    owner = await createUser(t.app, { email: 'owner@example.com', name: 'Owner' });
  });
  after(async () => {
    await t.app.services.mail.settled();
    await t.close();
    await mail.close();
  });

  const register = async (email: string) => {
    const client = new WebClient(t.app);
    await client.get('/register');
    const response = await client.post('/register', { name: 'Visitor', email, password: 'a fresh passphrase 7', password_confirmation: 'a fresh passphrase 7' });
    return { client, response };
  };

  it('answers a taken address exactly like a new one, creates nothing, logs nobody in, and mails the owner', async () => {
    const fresh = await register('newcomer@example.com');
    const taken = await register(owner.email);
    for (const { response } of [fresh, taken]) assert.equal(response.statusCode, 303);
    assert.equal(taken.response.headers.location, fresh.response.headers.location);
    assert.equal(taken.response.body, fresh.response.body);
    assert.equal(headerShape(taken.response), headerShape(fresh.response));

    const rows = await t.db.kysely.selectFrom('users').select(['email', 'name', 'password']).where('email', 'in', [owner.email, 'newcomer@example.com']).execute();
    assert.equal(rows.length, 2);
    assert.equal(rows.find((row) => row.email === owner.email)?.name, 'Owner', 'the owner’s account is untouched');
    assert.ok(await t.app.services.users.attempt(owner.email, owner.plainPassword), 'the owner’s password still works');
    assert.equal((await taken.client.get('/dashboard')).statusCode, 302, 'the visitor of a taken address is not logged in');

    const notice = await mail.waitFor(owner.email);
    assert.match(notice.subject, /tried to register/);
    assert.match(notice.text, /\/forgot-password/);
    const verification = await mail.waitFor('newcomer@example.com');
    assert.match(verification.text, /\/email\/verify\//);
  });

  it('still refuses a taken address with other errors without naming the address as taken', async () => {
    const client = new WebClient(t.app);
    await client.get('/register');
    const response = await client.post('/register', { name: 'Visitor', email: owner.email, password: 'short', password_confirmation: 'short' });
    assert.equal(response.statusCode, 422);
    assert.doesNotMatch(response.body, /already been taken/);
    assert.match(response.body, /at least 8 characters/);
  });
});

describe('registration of a taken address with verification off', () => {
  let t: TestApp;
  before(async () => {
    t = await buildTestApp({ ...OWASP_ARGON_COST, MUST_VERIFY_EMAIL: 'false' });
    await createUser(t.app, { email: 'owner@example.com' });
  });
  after(() => t.close());

  it('says the address is taken, as Laravel does (nothing to mail a link for)', async () => {
    const client = new WebClient(t.app);
    await client.get('/register');
    const response = await client.post('/register', { name: 'V', email: 'owner@example.com', password: 'a fresh passphrase 7', password_confirmation: 'a fresh passphrase 7' });
    assert.equal(response.statusCode, 422);
    assert.match(response.body, /already been taken/);
  });
});
