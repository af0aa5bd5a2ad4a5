// Error answers that say nothing of the inside (issue 25 §2), with the database really failing:
// SQLite on a full tmpfs, PostgreSQL behind a cut TCP proxy. The session row is saved as the
// answer is sent; when that save failed, the error page's own answer ran the same failing save,
// and Fastify's last-resort handler answered `500 {"code":"SQLITE_FULL",…}` or `503
// {"code":"ECONNREFUSED","message":"connect ECONNREFUSED 127.0.0.1:5433"}`. Every route must
// answer with the site's error page (the envelope under /api) and a generic message, and the
// failure is logged once.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { UNWRITABLE_MESSAGE } from '../../src/plugins/errors.js';
import { createUser, issueToken } from '../helpers.js';
import { WebClient } from '../support/client.js';
import { appBehindProxy, appOnSmallDisk, assertEachLoggedOnce, assertSaysNothingInside, stackLines, type FullDiskApp, type OutageApp, type ProxiedApp } from '../support/outage-app.js';
import { needsPostgres, sqliteOnly } from '../support/services.js';
import { skipWithoutTmpfs } from '../support/tmpfs.js';
import { login } from '../web/support.js';

// Pages a guest and a signed-in user may ask for, and the API's reads and writes.
const PAGES = ['/', '/login', '/register', '/forgot-password', '/blog', '/dashboard', '/profile', '/security', '/user/confirm-password', '/admin', '/admin/login'];
const API = [
  { method: 'GET', url: '/api/user' },
  { method: 'GET', url: '/api/posts' },
  { method: 'GET', url: '/api/settings' },
  { method: 'PUT', url: '/api/user', payload: { name: 'Renamed in an outage' } },
  { method: 'POST', url: '/api/tokens', payload: { email: 'nobody@example.com', password: 'wrong password', device_name: 'x' } },
] as const;

type Answer = { statusCode: number; body: string; headers: Record<string, unknown> };

/** Every page, as a guest and signed in, and every API call with a token: none may say anything of the inside. */
async function sweep(t: OutageApp, signedIn: WebClient, token: string, ports: number[]): Promise<Answer[]> {
  const answers: Answer[] = [];
  for (const url of PAGES) {
    for (const [who, client] of [['a guest', new WebClient(t.app)], ['signed in', signedIn]] as const) {
      const answer = await client.get(url);
      assertSaysNothingInside(`GET ${url} (${who}) ${answer.statusCode}`, answer, ports);
      if (answer.statusCode >= 500) assert.match(String(answer.headers['content-type']), /^text\/html/, `GET ${url} (${who}) answers the site's error page`);
      answers.push(answer);
    }
  }
  for (const call of API) {
    const answer = await t.app.inject({ method: call.method, url: call.url, headers: { authorization: `Bearer ${token}` }, ...('payload' in call ? { payload: call.payload } : {}) });
    assertSaysNothingInside(`${call.method} ${call.url} ${answer.statusCode}`, answer, ports);
    if (answer.statusCode >= 500) assert.deepEqual(Object.keys(answer.json() as object).sort(), ['errors', 'message'], `${call.method} ${call.url} answers the envelope`);
    answers.push(answer);
  }
  return answers;
}

function assertErrorPage(what: string, answer: Answer, status: number, message: string): void {
  assert.equal(answer.statusCode, status, `${what}: ${answer.body.slice(0, 200)}`);
  assert.match(String(answer.headers['content-type']), /^text\/html/, what);
  assert.match(answer.body, /class="[^"]*\berror-page\b/, `${what} is the site's error page`);
  assert.ok(answer.body.includes(message), `${what} says "${message}"`);
}

/** The guest forms and what they send. */
const forms = (email: string, password: string) =>
  [
    ['/login', { email, password }],
    ['/register', { name: 'Newcomer', email: 'newcomer@example.com', password: 'a fresh passphrase 7', password_confirmation: 'a fresh passphrase 7' }],
  ] as const;

describe('error answers on a full disk (SQLite)', { skip: sqliteOnly('a full disk under the SQLite file; PostgreSQL below is cut instead') || skipWithoutTmpfs() }, () => {
  let t: FullDiskApp;
  let signedIn: WebClient;
  let token: string;
  let user: Awaited<ReturnType<typeof createUser>>;

  before(async () => {
    t = await appOnSmallDisk();
    user = await createUser(t.app);
    token = await issueToken(t.app, user.email, user.plainPassword);
    signedIn = new WebClient(t.app);
    await login(signedIn, user.email, user.plainPassword);
    t.disk.fill();
  });
  after(() => t?.close());

  it('shows a guest /login and /register (they write nothing) and answers a sign-in with the error page, 503 and Retry-After, saying nothing of SQLite', async () => {
    for (const url of ['/login', '/register']) assert.equal((await new WebClient(t.app).get(url)).statusCode, 200, `GET ${url}`);
    const client = new WebClient(t.app);
    await client.get('/login');
    const answer = await client.post('/login', { email: user.email, password: user.plainPassword });
    assertErrorPage('POST /login', answer, 503, UNWRITABLE_MESSAGE);
    assert.equal(answer.headers['retry-after'], '60');
    assertSaysNothingInside('POST /login', answer);
  });

  it('answers every page and API call without a word of the inside, and logs each failure once', async () => {
    const answers = await sweep(t, signedIn, token, []);
    assert.ok(answers.some((answer) => answer.statusCode === 503), 'some answers are 503');
    assert.ok(stackLines(t.log()).some((line) => line.err?.code === 'SQLITE_FULL' && line.msg === 'request failed'), 'the failure is logged');
    assertEachLoggedOnce(t.log());
  });
});

describe('error answers with PostgreSQL cut', { skip: needsPostgres }, () => {
  let t: ProxiedApp;
  let signedIn: WebClient;
  let token: string;
  let user: Awaited<ReturnType<typeof createUser>>;

  before(async () => {
    t = await appBehindProxy();
    user = await createUser(t.app);
    token = await issueToken(t.app, user.email, user.plainPassword);
    signedIn = new WebClient(t.app);
    await login(signedIn, user.email, user.plainPassword);
    await t.proxy.down();
  });
  after(() => t?.close());

  it('answers GET /login and GET /register signed in, and a guest sending them, with the error page and 503, naming neither ECONNREFUSED nor the address', async () => {
    for (const url of ['/login', '/register']) {
      const answer = await signedIn.get(url);
      assertErrorPage(`GET ${url} (signed in)`, answer, 503, 'Service unavailable');
      assertSaysNothingInside(`GET ${url} (signed in)`, answer, [t.proxy.port]);
    }
    // A guest's form needs no query to be shown (the settings fall back to their defaults).
    for (const [url, form] of forms(user.email, user.plainPassword)) {
      const client = new WebClient(t.app);
      assert.equal((await client.get(url)).statusCode, 200, `GET ${url} (a guest)`);
      const answer = await client.post(url, form);
      assertErrorPage(`POST ${url} (a guest)`, answer, 503, 'Service unavailable');
      assertSaysNothingInside(`POST ${url} (a guest)`, answer, [t.proxy.port]);
    }
  });

  it('answers every page and API call without a word of the inside, and logs each failure once', async () => {
    const answers = await sweep(t, signedIn, token, [t.proxy.port]);
    assert.ok(answers.every((answer) => answer.statusCode === 503 || answer.statusCode < 500), answers.map((a) => a.statusCode).join(' '));
    assertEachLoggedOnce(t.log());
  });
});
