// The API contract, checked by a tool nobody here wrote: Stoplight Prism as a validating proxy
// (`prism proxy --errors`) in front of the listening service, started from the document the
// service serves. Every exchange goes through it: each endpoint's success and failure answers,
// conditional reads (304), a 429, the first-party SPA's JSON flows and /up. Any violation Prism
// reports (its `sl-violations` header, or its own problem+json answer in place of the service's)
// fails the exchange's test. Requests that break the document on purpose (bad bodies, a missing
// X-XSRF-TOKEN) go through a second Prism that forwards them unchecked, so that what it checks is
// the service's refusal.
// The 503s go through a Prism of their own, in front of a second server whose database really
// stops answering (see `startOutageServer`). A last case puts Prism in front of the service with
// the document broken on purpose, and sees each break reported: the no-violation checks are live.
// Not sent through Prism: malformed JSON (a 400 that Prism cannot forward: it fails to parse the
// body and never answers; test/api/openapi.test.ts checks it against the same document).
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { after, afterEach, before, beforeEach, describe, it } from 'node:test';
import SQLite from 'better-sqlite3';
import type { FastifyInstance } from 'fastify';
import { buildApp } from '../../src/app.js';
import { sqliteFile } from '../../src/db/connect.js';
import { hashSecret } from '../../src/modules/tokens/token-string.js';
import { createTestDatabase, createUser, issueToken, onPostgres, testConfig } from '../helpers.js';
import { listenWithAppUrl, startServer, type RunningServer } from '../support/browser.js';
import { appBehindProxy } from '../support/outage-app.js';
import { codeAt, enableTwoFactor } from '../support/two-factor-sign-in.js';
import { describeViolation, prismFindings, startPrismProxy, writeServedDocument, type PrismProxy, type Violation } from '../support/prism.js';
import { insertPost, setTokenTimes, splitToken } from './support.js';

const SPA = 'http://localhost:5173';
/** Requests a minute per token or IP: low, so that a 429 takes a few requests. */
const RATE_LIMIT = 40;
/** Bytes of a request body: low, so that a 413 takes a small body. */
const BODY_LIMIT = 16_384;

type Exchange = { status: number; headers: Headers; body: string; findings: Violation[] };
type Request = { method?: string; headers?: Record<string, string>; json?: unknown; form?: Record<string, string>; text?: string };

/** A browser's cookies for the service, fed from fetch answers. */
class Cookies {
  private readonly jar = new Map<string, string>();

  take(headers: Headers): void {
    // Prism's proxy joins the Set-Cookie lines with commas (a comma inside Expires is followed by
    // a day, never by `name=`).
    for (const line of headers.getSetCookie().flatMap((joined) => joined.split(/,\s*(?=[\w.-]+=)/))) {
      const [pair = ''] = line.split(';');
      const at = pair.indexOf('=');
      const name = pair.slice(0, at).trim();
      const value = pair.slice(at + 1).trim();
      if (value === '' || /max-age=0\b/i.test(line)) this.jar.delete(name);
      else this.jar.set(name, value);
    }
  }

  xsrf(): string {
    return decodeURIComponent(this.jar.get('XSRF-TOKEN') ?? '');
  }

  header(): string {
    return [...this.jar].map(([name, value]) => `${name}=${value}`).join('; ');
  }
}

/** The service's settings here: every server of this file runs with them. */
const SERVICE_ENV = { API_RATE_LIMIT: String(RATE_LIMIT), BODY_LIMIT: String(BODY_LIMIT), SANCTUM_STATEFUL_DOMAINS: 'localhost:5173' };

type OutageServer = {
  url: string;
  app: FastifyInstance;
  /** Makes the database stop answering the API's queries (on SQLite, its writes). */
  cut(): Promise<void>;
  /** Makes the database stop answering at all, GET /up's `select 1` included. */
  gone(): Promise<void>;
  close(): Promise<void>;
};

/**
 * A listening server of its own whose database the test makes unavailable, as the fault tests
 * do (test/faults/, support/outage-app.ts). PostgreSQL: reached through a TCP proxy that is cut
 * (connections reset, port refused: ECONNREFUSED), for the API and GET /up alike. SQLite, in a
 * file: another connection holds the write lock (BEGIN IMMEDIATE, as another process or
 * instance on the same file can), so that every write of the service waits out its busy timeout
 * and fails with SQLITE_BUSY; the service's 5 s wait is set to 100 ms here, which changes nothing
 * but the wait. In WAL mode reads go on beside that writer (and no connection can take the file
 * for itself while the service has it open), and GET /up's `select 1` reads no table: on SQLite
 * only a closed connection stops it answering, so `gone()` closes the service's connection (as
 * test/api/operations.test.ts does).
 */
async function startOutageServer(): Promise<OutageServer> {
  if (onPostgres) {
    const proxied = await appBehindProxy(SERVICE_ENV);
    try {
      await proxied.app.listen({ host: '127.0.0.1', port: 0 });
    } catch (error) {
      await proxied.close();
      throw error;
    }
    const { port } = proxied.app.server.address() as AddressInfo;
    return { url: `http://127.0.0.1:${port}`, app: proxied.app, cut: () => proxied.proxy.down(), gone: () => proxied.proxy.down(), close: () => proxied.close() };
  }
  const database = await createTestDatabase({ file: true });
  const { app, url } = await listenWithAppUrl('127.0.0.1', (address) => buildApp(testConfig({ APP_URL: address, ...SERVICE_ENV }), { db: database.db }));
  let holder: SQLite.Database | null = null;
  const release = () => {
    if (holder?.open === true) holder.close();
  };
  return {
    url,
    app,
    cut: async () => {
      app.db.sqlite?.pragma('busy_timeout = 100');
      holder = new SQLite(sqliteFile(database.url) ?? '');
      holder.exec('begin immediate');
    },
    gone: async () => {
      release();
      await app.db.close();
    },
    close: async () => {
      release();
      await app.close();
      await database.drop().catch(() => undefined);
    },
  };
}

describe(`the service behind Prism's validating proxy (${onPostgres ? 'PostgreSQL' : 'SQLite'})`, () => {
  let server: RunningServer;
  let checked: PrismProxy;
  let unchecked: PrismProxy;
  let removeDocument = () => undefined as void;
  let documentFile = '';
  let document: unknown;
  let user: Awaited<ReturnType<typeof createUser>>;
  let admin: Awaited<ReturnType<typeof createUser>>;
  let token = '';
  let adminToken = '';
  let published = '';

  before(async () => {
    server = await startServer(SERVICE_ENV);
    try {
      const served = await writeServedDocument(server.url);
      removeDocument = served.remove;
      documentFile = served.file;
      document = served.document;
      [checked, unchecked] = await Promise.all([startPrismProxy(served.file, server.url), startPrismProxy(served.file, server.url, { validateRequest: false })]);
    } catch (error) {
      await Promise.all([checked?.stop(), unchecked?.stop()]);
      removeDocument();
      await server.close();
      throw error;
    }
    user = await createUser(server.app);
    admin = await createUser(server.app, { admin: true });
    published = (await insertPost(server.app.db, { title: 'Published', locale: 'en' })).slug;
    await insertPost(server.app.db, { title: 'Publié', locale: 'fr' });
    await insertPost(server.app.db, { title: 'Draft', status: 'draft', published_at: null });
  });

  after(async () => {
    // Always: Prism's processes and the server end with the file, whatever failed.
    await Promise.all([checked?.stop(), unchecked?.stop()]);
    removeDocument();
    await server?.close();
  });

  /** Sends one request to `base` (a proxy, or the service itself) and reads what Prism says of it. */
  async function send(base: string, path: string, request: Request = {}): Promise<Exchange> {
    const headers: Record<string, string> = { accept: 'application/json', ...request.headers };
    let body: string | undefined;
    if (request.json !== undefined) {
      headers['content-type'] = 'application/json';
      body = JSON.stringify(request.json);
    } else if (request.form !== undefined) {
      headers['content-type'] = 'application/x-www-form-urlencoded';
      body = new URLSearchParams(request.form).toString();
    } else if (request.text !== undefined) {
      headers['content-type'] = 'text/plain';
      body = request.text;
    }
    // Prism leaves a request it cannot read unanswered (malformed JSON): a timeout, not a hang.
    const response = await fetch(`${base}${path}`, { method: request.method ?? 'GET', headers, body, redirect: 'manual', signal: AbortSignal.timeout(10_000) });
    const text = await response.text();
    return { status: response.status, headers: response.headers, body: text, findings: prismFindings(response.status, response.headers, text) };
  }

  // What Prism reported during the current test, one line per violation: every exchange of a test
  // is sent and all its violations listed, rather than only the first.
  let violations: string[] = [];
  beforeEach(() => {
    violations = [];
  });
  afterEach(() => {
    assert.deepEqual(violations, [], 'Prism reported violations');
  });

  /**
   * Sends a request through a proxy; records what Prism found wrong, and asserts the service
   * answered one of `statuses` (unless Prism answered in its place). Returns the exchange.
   */
  async function exchange(statuses: number | number[], path: string, request: Request = {}, proxy: PrismProxy = checked): Promise<Exchange> {
    const answer = await send(proxy.url, path, request);
    const what = `${request.method ?? 'GET'} ${path} → ${answer.status}`;
    violations.push(...answer.findings.map((finding) => `${what}: ${describeViolation(finding)}`));
    const prismAnswered = answer.findings.some((finding) => finding.message.startsWith('Prism answered'));
    if (!prismAnswered) assert.ok([statuses].flat().includes(answer.status), `${what}: ${answer.body.slice(0, 300)}`);
    return answer;
  }

  const auth = (plaintext: string) => ({ authorization: `Bearer ${plaintext}` });

  describe('the JSON API', () => {
    it('GET /up: 200', async () => {
      await exchange(200, '/up');
    });

    it('GET /api/openapi.json: 200', async () => {
      await exchange(200, '/api/openapi.json');
    });

    it('POST /api/tokens: 200 with a token, 401 for a wrong password', async () => {
      const issued = await exchange(200, '/api/tokens', { method: 'POST', json: { email: user.email, password: user.plainPassword, device_name: 'prism' } });
      token = (JSON.parse(issued.body) as { token: string }).token;
      adminToken = (JSON.parse((await exchange(200, '/api/tokens', { method: 'POST', json: { email: admin.email, password: admin.plainPassword, device_name: 'prism' } })).body) as { token: string }).token;
      await exchange([401, 422], '/api/tokens', { method: 'POST', json: { email: user.email, password: 'not the password', device_name: 'prism' } });
    });

    it('POST /api/tokens as a form (application/x-www-form-urlencoded): 200, as Laravel', async () => {
      await exchange(200, '/api/tokens', { method: 'POST', form: { email: user.email, password: user.plainPassword, device_name: 'prism-form' } });
    });

    it('POST /api/tokens with its own expires_at: 200 for a time ahead, 422 for one past', async () => {
      const credentials = { email: user.email, password: user.plainPassword, device_name: 'dated' };
      await exchange(200, '/api/tokens', { method: 'POST', json: { ...credentials, expires_at: new Date(Date.now() + 3_600_000).toISOString() } });
      await exchange(422, '/api/tokens', { method: 'POST', json: { ...credentials, expires_at: new Date(Date.now() - 3_600_000).toISOString() } });
    });

    it('GET /api/user: 200 with the token, 401 with a made-up or an expired one', async () => {
      await exchange(200, '/api/user', { headers: auth(token) });
      await exchange(401, '/api/user', { headers: auth('1|not-a-real-token') });
      const expiring = (JSON.parse((await exchange(200, '/api/tokens', { method: 'POST', json: { email: user.email, password: user.plainPassword, device_name: 'expiring' } })).body) as { token: string }).token;
      await setTokenTimes(server.app.db, splitToken(expiring).id, { expires_at: new Date(Date.now() - 60_000).toISOString() });
      await exchange(401, '/api/user', { headers: auth(expiring) });
    });

    it('PUT /api/user: 200 for a new name, 401 with a bad token', async () => {
      await exchange(200, '/api/user', { method: 'PUT', headers: auth(token), json: { name: 'Renamed Through Prism' } });
      await exchange(401, '/api/user', { method: 'PUT', headers: auth('1|not-a-real-token'), json: { name: 'Nobody' } });
      await exchange(200, '/api/user', { method: 'PUT', headers: auth(token), form: { name: 'Renamed By A Form' } });
    });

    it('PUT /api/user/password: 401 with a bad token, 422 for a wrong current password, 204 for the right one', async () => {
      const next = 'another correct horse battery';
      await exchange(401, '/api/user/password', { method: 'PUT', headers: auth('1|not-a-real-token'), json: { current_password: user.plainPassword, password: next, password_confirmation: next } });
      await exchange(422, '/api/user/password', { method: 'PUT', headers: auth(token), json: { current_password: 'wrong password here', password: next, password_confirmation: next } });
      await exchange(204, '/api/user/password', { method: 'PUT', headers: auth(token), json: { current_password: user.plainPassword, password: next, password_confirmation: next } });
      user.plainPassword = next;
    });

    it('GET /api/posts: 200, 304 for its ETag, pages, locales in any case, drafts for an admin only', async () => {
      const list = await exchange(200, '/api/posts');
      const etag = list.headers.get('etag');
      assert.ok(etag !== null, 'GET /api/posts sends an ETag');
      await exchange(304, '/api/posts', { headers: { 'if-none-match': etag } });
      await exchange(200, '/api/posts?locale=FR&per_page=1&page=1');
      await exchange(200, '/api/posts?page=999');
      await exchange(422, '/api/posts?locale=de');
      await exchange(422, '/api/posts?status=draft');
      await exchange(200, '/api/posts?status=draft', { headers: auth(adminToken) });
      await exchange(401, '/api/posts', { headers: auth('1|not-a-real-token') });
    });

    it('GET /api/posts/{slug}: 200, 304 for its ETag, 404 for an unknown slug', async () => {
      const post = await exchange(200, `/api/posts/${published}`);
      const etag = post.headers.get('etag');
      assert.ok(etag !== null, 'GET /api/posts/{slug} sends an ETag');
      await exchange(304, `/api/posts/${published}`, { headers: { 'if-none-match': etag } });
      await exchange(200, `/api/posts/${published}?locale=en`);
      await exchange(404, '/api/posts/no-such-post');
    });

    it('GET /api/settings: 200, 304 for its ETag', async () => {
      const settings = await exchange(200, '/api/settings');
      const etag = settings.headers.get('etag');
      assert.ok(etag !== null, 'GET /api/settings sends an ETag');
      await exchange(304, '/api/settings', { headers: { 'if-none-match': etag } });
    });

    it('POST, PUT and DELETE /api/posts/{slug}: 201, 200, 204 for an admin; 401 with a bad token; 403 for a user; 422 for a locale the site does not offer', async () => {
      const created = await exchange(201, '/api/posts', { method: 'POST', headers: auth(adminToken), json: { title: 'Through Prism', body: 'Checked on the way.', locale: 'en', status: 'published' } });
      const { slug } = (JSON.parse(created.body) as { data: { slug: string } }).data;
      await exchange(403, '/api/posts', { method: 'POST', headers: auth(token), json: { title: 'Not mine to write', body: 'No.' } });
      await exchange(422, '/api/posts', { method: 'POST', headers: auth(adminToken), json: { title: 'Auf Deutsch', body: 'Nein.', locale: 'de' } });
      await exchange(200, `/api/posts/${slug}`, { method: 'PUT', headers: auth(adminToken), json: { title: 'Through Prism, again' } });
      await exchange(404, '/api/posts/no-such-post', { method: 'PUT', headers: auth(adminToken), json: { title: 'Nothing' } });
      await exchange(401, `/api/posts/${slug}`, { method: 'PUT', headers: auth('1|not-a-real-token'), json: { title: 'Nobody' } });
      await exchange(403, `/api/posts/${slug}`, { method: 'PUT', headers: auth(token), json: { title: 'Not mine to edit' } });
      await exchange(422, `/api/posts/${slug}`, { method: 'PUT', headers: auth(adminToken), json: { locale: 'de' } });
      await exchange(403, `/api/posts/${slug}`, { method: 'DELETE', headers: auth(token) });
      await exchange(401, `/api/posts/${slug}`, { method: 'DELETE', headers: auth('1|not-a-real-token') });
      await exchange(204, `/api/posts/${slug}`, { method: 'DELETE', headers: auth(adminToken) });
      await exchange(404, `/api/posts/${slug}`, { method: 'DELETE', headers: auth(adminToken) });
    });

    it('DELETE /api/tokens/current and DELETE /api/tokens: 204, then 401 with the revoked token', async () => {
      // Another account: DELETE /api/tokens ends every token of its account.
      const other = await createUser(server.app);
      const issue = async () => (JSON.parse((await exchange(200, '/api/tokens', { method: 'POST', json: { email: other.email, password: other.plainPassword, device_name: 'revoked' } })).body) as { token: string }).token;
      const current = await issue();
      await exchange(204, '/api/tokens/current', { method: 'DELETE', headers: auth(current) });
      await exchange(401, '/api/tokens/current', { method: 'DELETE', headers: auth(current) });
      const all = await issue();
      await exchange(204, '/api/tokens', { method: 'DELETE', headers: auth(all) });
      await exchange(401, '/api/user', { headers: auth(all) });
      await exchange(401, '/api/tokens', { method: 'DELETE', headers: auth(all) });
    });

    it(`answers 429 with Retry-After past ${RATE_LIMIT} requests a minute`, async () => {
      const fresh = (JSON.parse((await exchange(200, '/api/tokens', { method: 'POST', json: { email: admin.email, password: admin.plainPassword, device_name: 'limited' } })).body) as { token: string }).token;
      for (let request = 1; request <= RATE_LIMIT; request += 1) await exchange(200, '/api/settings', { headers: auth(fresh) });
      const limited = await exchange(429, '/api/settings', { headers: auth(fresh) });
      assert.ok(limited.headers.get('retry-after') !== null);
    });
  });

  describe('bad bodies, forwarded to the service unchecked: its refusals match the document', () => {
    // (Malformed JSON cannot go through Prism: it fails to parse the body and never answers.)
    it('POST /api/tokens: 422 for missing fields, 413 for a body over the limit, 415 for plain text', async () => {
      await exchange(422, '/api/tokens', { method: 'POST', json: {} }, unchecked);
      await exchange(413, '/api/tokens', { method: 'POST', json: { email: user.email, password: 'x'.repeat(BODY_LIMIT), device_name: 'large' } }, unchecked);
      await exchange(415, '/api/tokens', { method: 'POST', text: 'email=someone' }, unchecked);
    });

    it('PUT /api/user and PUT /api/user/password: 422', async () => {
      await exchange(422, '/api/user', { method: 'PUT', headers: auth(token), json: { email: 'not-an-email' } }, unchecked);
      await exchange(422, '/api/user/password', { method: 'PUT', headers: auth(token), json: {} }, unchecked);
    });

    it('POST /api/posts: 422; GET /api/posts with per_page over 100: 422', async () => {
      await exchange(422, '/api/posts', { method: 'POST', headers: auth(adminToken), json: {} }, unchecked);
      await exchange(422, '/api/posts?per_page=1000', {}, unchecked);
    });
  });

  describe("the first-party SPA's JSON flows (Accept: application/json, X-XSRF-TOKEN)", () => {
    const cookies = new Cookies();
    const spa = (withXsrf = true): Record<string, string> => ({ origin: SPA, referer: `${SPA}/`, cookie: cookies.header(), ...(withXsrf ? { 'x-xsrf-token': cookies.xsrf() } : {}) });
    const step = async (statuses: number | number[], path: string, request: Request = {}, proxy: PrismProxy = checked) => {
      const answer = await exchange(statuses, path, { method: 'POST', ...request, headers: { ...spa(), ...request.headers } }, proxy);
      cookies.take(answer.headers);
      return answer;
    };

    // As the SPA does before signing in (and after signing out, which ends the session cookie).
    const csrfCookie = async () => {
      const answer = await exchange(204, '/sanctum/csrf-cookie', { headers: { origin: SPA } });
      cookies.take(answer.headers);
    };

    it('GET /sanctum/csrf-cookie: 204 with the XSRF-TOKEN cookie', async () => {
      await csrfCookie();
      assert.notEqual(cookies.xsrf(), '');
    });

    it('POST /login: 419 without the XSRF header, 422 for a wrong password, 204 signed in; then GET /api/user on the session', async () => {
      // Without the X-XSRF-TOKEN header the request breaks the document (a required header): sent unchecked.
      await exchange(419, '/login', { method: 'POST', headers: spa(false), json: { email: user.email, password: user.plainPassword } }, unchecked);
      await step(422, '/login', { json: { email: user.email, password: 'not the password' } });
      await step(422, '/login', { json: {} }, unchecked);
      await step([200, 204], '/login', { json: { email: user.email, password: user.plainPassword } });
      await exchange(200, '/api/user', { headers: spa() });
      // A write on the session without the header: the API's own 419 (the header is the SPA flow's, not a documented parameter).
      await exchange(419, '/api/user', { method: 'PUT', headers: spa(false), json: { name: 'No XSRF Header' } });
    });

    it('POST /user/confirm-password: 422 for a wrong password, 204 for the right one; the confirmation status before and after', async () => {
      await exchange(200, '/user/confirmed-password-status', { headers: spa() });
      await step(422, '/user/confirm-password', { json: { password: 'not the password' } });
      await step([201, 204], '/user/confirm-password', { json: { password: user.plainPassword } });
      await exchange(200, '/user/confirmed-password-status', { headers: spa() });
    });

    it('POST /email/verification-notification: 204 (nothing to send for a verified address)', async () => {
      await step(204, '/email/verification-notification');
    });

    it('POST /register while signed in: refused, not redirected', async () => {
      await step([409, 422], '/register', { json: { name: 'Already In', email: 'already-in@example.com', password: 'a long enough password', password_confirmation: 'a long enough password' } });
    });

    it('POST /logout: 204', async () => {
      await step(204, '/logout');
    });

    it('signed out: 401 from /user/confirmed-password-status, /user/confirm-password, /email/verification-notification and /logout', async () => {
      await csrfCookie();
      await exchange(401, '/user/confirmed-password-status', { headers: spa() });
      await step(401, '/user/confirm-password', { json: { password: 'whatever the password' } });
      await step(401, '/email/verification-notification');
      await step(401, '/logout');
    });

    it('POST /two-factor-challenge with no sign-in pending: refused', async () => {
      await csrfCookie();
      await step([401, 419, 422], '/two-factor-challenge', { json: { code: '123456' } });
    });

    it('a password + code sign-in: 200 {"two_factor": true}, 422 for a wrong code, 204 for the right one, then signed out', async () => {
      const twoFactor = await createUser(server.app);
      const { secret } = await enableTwoFactor(server.app, twoFactor.id);
      await csrfCookie();
      await step(200, '/login', { json: { email: twoFactor.email, password: twoFactor.plainPassword } });
      await step(422, '/two-factor-challenge', { json: { code: '000000' } });
      await step(204, '/two-factor-challenge', { json: { code: await codeAt(secret) } });
      await exchange(200, '/api/user', { headers: spa() });
      await step(204, '/logout');
    });

    it('POST /register: 201 signed up, 422 for an email taken', async () => {
      await csrfCookie();
      await step([201, 204], '/register', { json: { name: 'Spa Person', email: 'spa-person@example.com', password: 'a long enough password', password_confirmation: 'a long enough password' } });
      await step(204, '/logout');
      await csrfCookie();
      await step(422, '/register', { json: { name: 'Spa Again', email: 'spa-person@example.com', password: 'a long enough password', password_confirmation: 'a long enough password' } });
    });

    it('POST /forgot-password: answered as for any email, 422 for a bad one; POST /reset-password: 422 with a made-up token, 204 with the right one', async () => {
      await csrfCookie();
      await step([200, 204], '/forgot-password', { json: { email: user.email } });
      // Not an email: the body breaks the document, so it goes unchecked and the refusal is what is checked.
      await step(422, '/forgot-password', { json: { email: 'not-an-email' } }, unchecked);
      const resetting = await createUser(server.app);
      const secret = 'prism-reset-token';
      await server.app.db.kysely.insertInto('password_reset_tokens').values({ email: resetting.email.toLowerCase(), token: hashSecret(secret), created_at: new Date().toISOString() }).execute();
      const fields = { email: resetting.email, password: 'a new long password', password_confirmation: 'a new long password' };
      await step(422, '/reset-password', { json: { ...fields, token: 'made-up' } });
      await step(204, '/reset-password', { json: { ...fields, token: secret } });
    });
  });

  describe('the database unavailable: 503 answers, through a Prism in front of a server whose database stops answering', () => {
    let outage: OutageServer | undefined;
    let outageProxy: PrismProxy | undefined;
    let outageToken = '';
    let member: Awaited<ReturnType<typeof createUser>>;

    before(async () => {
      outage = await startOutageServer();
      member = await createUser(outage.app);
      outageToken = await issueToken(outage.app, member.email, member.plainPassword);
      outageProxy = await startPrismProxy(documentFile, outage.url);
    });
    after(async () => {
      await outageProxy?.stop();
      await outage?.close();
    });

    it(`PUT /api/user and POST /api/tokens${onPostgres ? ', GET /api/user and GET /api/posts' : ''}: 503 with the envelope and Retry-After`, async () => {
      assert.ok(outage !== undefined && outageProxy !== undefined);
      await outage.cut();
      const calls: [string, Request][] = [
        ['/api/user', { method: 'PUT', headers: auth(outageToken), json: { name: 'Renamed In An Outage' } }],
        ['/api/tokens', { method: 'POST', json: { email: member.email, password: member.plainPassword, device_name: 'outage' } }],
        // On SQLite reads go on while another connection writes (WAL): only the PostgreSQL cut stops them.
        ...(onPostgres ? ([['/api/user', { headers: auth(outageToken) }], ['/api/posts', { headers: auth(outageToken) }]] as [string, Request][]) : []),
      ];
      for (const [path, request] of calls) {
        const answer = await exchange(503, path, request, outageProxy);
        const what = `${request.method ?? 'GET'} ${path}`;
        assert.deepEqual(JSON.parse(answer.body), { message: 'Service Unavailable.', errors: {} }, what);
        assert.equal(answer.headers.get('retry-after'), '5', `${what}: Retry-After`);
      }
    });

    it('GET /up: 503, the database unavailable', async () => {
      assert.ok(outage !== undefined && outageProxy !== undefined);
      await outage.gone();
      const answer = await exchange(503, '/up', {}, outageProxy);
      assert.deepEqual(JSON.parse(answer.body), { status: 'unavailable', database: false, rate_limit_store: { kind: 'memory', ok: true } });
    });
  });

  describe('the same service behind Prism with a document broken on purpose (the checks have teeth)', () => {
    type Json = Record<string, unknown>;
    /** `node`, or what its `$ref` (a JSON pointer into the document) names. */
    const resolved = (root: Json, node: Json): Json =>
      typeof node.$ref === 'string'
        ? node.$ref
            .slice(2)
            .split('/')
            .reduce<Json>((at, key) => at[key.replaceAll('~1', '/').replaceAll('~0', '~')] as Json, root)
        : node;

    it('reports a status, a required response header and a body property the document no longer allows', async () => {
      const broken = structuredClone(document) as Json;
      const operation = (path: string) => ((broken.paths as Json)[path] as Json).get as { responses: Record<string, Json> };
      // 1. GET /api/settings loses its 304.
      const settings = operation('/api/settings');
      assert.ok(settings.responses['304'] !== undefined);
      delete settings.responses['304'];
      // 2. Its posts_per_page becomes a string.
      const body = resolved(broken, ((resolved(broken, settings.responses['200']!).content as Json)['application/json'] as Json).schema as Json);
      const data = resolved(broken, (body.properties as Json).data as Json);
      (data.properties as Json).posts_per_page = { type: 'string' };
      // 3. GET /api/posts/{slug}'s 200 requires a header the service never sends.
      const post = resolved(broken, operation('/api/posts/{slug}').responses['200']!);
      post.headers = { ...(post.headers as Json), 'X-Broken-On-Purpose': { required: true, schema: { type: 'string' } } };
      const brokenFile = documentFile.replace(/openapi\.json$/, 'broken.json');
      writeFileSync(brokenFile, JSON.stringify(broken));
      const proxy = await startPrismProxy(brokenFile, server.url);
      try {
        // A token of its own: the address has spent its requests a minute by now.
        const fresh = auth((await server.app.services.tokens.issue(admin.id, 'teeth')).plaintext);
        const etag = (await fetch(`${server.url}/api/settings`, { headers: fresh })).headers.get('etag');
        assert.ok(etag !== null);
        // Sent as every exchange above is: what Prism says lands where afterEach looks.
        const seen = async (path: string, headers: Record<string, string> = {}) => {
          await exchange([200, 304], path, { headers: { ...fresh, ...headers } }, proxy);
          const lines = violations;
          violations = [];
          return lines.join('\n');
        };
        assert.match(await seen('/api/settings', { 'if-none-match': etag }), /→ 304: .*Unable to match the returned status code/, 'the 304 the document no longer has');
        assert.match(await seen('/api/settings'), /response\.body\.data\.posts_per_page .*must be string/, 'posts_per_page, an integer, where the document says a string');
        assert.match(await seen(`/api/posts/${published}`), /required property 'x-broken-on-purpose'/i, 'the required header the service does not send');
      } finally {
        await proxy.stop();
      }
    });
  });
});
