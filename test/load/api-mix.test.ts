// Load on loopback: autocannon with 200 connections against the real service (a child process)
// mixing token issue, GET /api/user, GET /api/posts, PUT /api/user and revocations. Afterwards:
// no answer other than the expected ones, every token that got a 200 at issue works unless it
// was revoked, and every acknowledged write is in the database. 8,000 requests in `npm test` (about
// 5 s on two cores); 48,000 with LOAD_FULL=1. A number of requests, not a duration: a busy machine
// takes longer, and still sends the whole mix. Runs on the database of TEST_DATABASE_URL (a SQLite file by default).
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type autocannon from 'autocannon';
import { TokenService } from '../../src/modules/tokens/tokens.service.js';
import { onPostgres } from '../helpers.js';
import { insertPost } from '../api/support.js';
import { cannon, createSharedDatabase, seedUsers, startServerProcess, type SeededUser, type ServerProcess, type SharedDatabase } from './server-process.js';

const FULL = process.env.LOAD_FULL === '1';
const REQUESTS = FULL ? 48_000 : 8_000;
const CONNECTIONS = 200;
// More users than connections: each loop of the mix holds one user alone, so its writes are
// sequential and the final state of every user is known exactly.
const USERS = 400;
const PASSWORD = 'load-test-password';

// `pendingName`/`maybeRevoked`: a request sent but not answered when the run stopped may or may not
// have been applied, so both outcomes are accepted for it (and only for it).
type UserState = { user: SeededUser; token: string | null; lastName: string | null; pendingName: string | null; tokens: string[] };
type Issued = { token: string; userId: number; revoked: boolean; maybeRevoked: boolean };

describe(`load: ${REQUESTS} requests on ${CONNECTIONS} connections on ${onPostgres ? 'PostgreSQL' : 'SQLite'}`, () => {
  let database: SharedDatabase;
  let server: ServerProcess;
  let users: UserState[];

  before(async () => {
    database = await createSharedDatabase();
    users = (await seedUsers(database.db, USERS, PASSWORD)).map((user) => ({ user, token: null, lastName: null, pendingName: null, tokens: [] }));
    // Each user starts with a token (issued by the service itself, straight into the database), so
    // that argon2 work at issue is one part of the mix rather than all of it.
    const tokenService = new TokenService(database.db, { tokenExpirationMinutes: null, tokenPrefix: '' });
    await Promise.all(
      users.map(async (state) => {
        state.token = (await tokenService.issue(state.user.id, 'seeded')).plaintext;
        state.tokens.push(state.token);
      }),
    );
    for (let i = 0; i < 30; i += 1) await insertPost(database.db);
    server = await startServerProcess({
      DATABASE_URL: database.url,
      DATA_DIR: database.dataDir,
      // The limits stay on (their code is on the hot path) but high enough not to refuse the mix;
      // the credential limit keeps its default and may answer 429, which is expected.
      API_RATE_LIMIT: '1000000',
      LOGIN_RATE_LIMIT: '5',
    });
  });
  after(async () => {
    await server?.stop();
    await database?.drop();
  });

  it('answers only expected statuses, keeps every issued token working unless revoked, and loses no write', { timeout: (REQUESTS / 100 + 120) * 1000 }, async () => {
    const free = [...users];
    const issued = new Map<string, Issued>(users.map((state) => [state.token!, { token: state.token!, userId: state.user.id, revoked: false, maybeRevoked: false }]));
    const unexpected: string[] = [];
    const counts = { issued: 0, revokedCurrent: 0, revokedAll: 0, writes: 0, reads: 0 };
    let sequence = 0;

    const json = { 'content-type': 'application/json', accept: 'application/json' };
    const auth = (token: string) => ({ accept: 'application/json', authorization: `Bearer ${token}` });
    const expect = (step: string, allowed: number[], status: number, detail = '') => {
      if (!allowed.includes(status)) unexpected.push(`${step}: ${status} ${detail}`.slice(0, 300));
      return allowed.includes(status);
    };
    const holder = (context: Record<string, unknown>) => context.state as UserState | undefined;

    const requests: autocannon.Request[] = [
      // 1. Take a user; issue a token when it has none (and now and then anyway), else read the settings.
      {
        setupRequest: (request, context) => {
          const state = free.shift() ?? users[sequence % users.length]!;
          sequence += 1;
          context.state = state;
          context.seq = sequence;
          context.issuing = state.token === null || sequence % 7 === 0;
          if (context.issuing) {
            return { ...request, method: 'POST', path: '/api/tokens', headers: json, body: JSON.stringify({ email: state.user.email, password: PASSWORD, device_name: `load-${sequence}` }) };
          }
          return { ...request, method: 'GET', path: '/api/settings', headers: { accept: 'application/json' }, body: undefined };
        },
        onResponse: (status, body, context) => {
          const state = holder(context)!;
          if (!context.issuing) return void expect('GET /api/settings', [200], status);
          if (!expect('POST /api/tokens', [200, 429], status, body) || status !== 200) return;
          const token = (JSON.parse(body) as { token: string }).token;
          issued.set(token, { token, userId: state.user.id, revoked: false, maybeRevoked: false });
          state.token = token;
          state.tokens.push(token);
          counts.issued += 1;
        },
      },
      // 2. A write, or one time in five a revocation (mostly of the current token, sometimes of all).
      //    Early in the loop, so that even a short run has many of both.
      {
        setupRequest: (request, context) => {
          const state = holder(context)!;
          context.token = state.token;
          const seq = context.seq as number;
          context.revoke = state.token === null ? null : seq % 5 === 0 ? (seq % 4 === 0 ? 'all' : 'current') : null;
          if (state.token === null) return { ...request, method: 'GET', path: '/api/settings', headers: { accept: 'application/json' }, body: undefined };
          if (context.revoke !== null) {
            for (const token of context.revoke === 'all' ? state.tokens : [state.token]) issued.get(token)!.maybeRevoked = true;
            return { ...request, method: 'DELETE', path: context.revoke === 'all' ? '/api/tokens' : '/api/tokens/current', headers: auth(state.token), body: undefined };
          }
          context.name = `Load ${state.user.id} #${seq}`;
          state.pendingName = context.name as string;
          return { ...request, method: 'PUT', path: '/api/user', headers: { ...auth(state.token), 'content-type': 'application/json' }, body: JSON.stringify({ name: context.name }) };
        },
        onResponse: (status, body, context) => {
          const state = holder(context)!;
          if (context.token === null) return void expect('GET /api/settings', [200], status);
          if (context.revoke === null) {
            state.pendingName = null;
            if (!expect('PUT /api/user', [200, 429], status, body) || status !== 200) return;
            state.lastName = context.name as string;
            counts.writes += 1;
            return;
          }
          if (!expect(`DELETE (${String(context.revoke)})`, [204, 429], status, body) || status !== 204) return;
          const revoked = context.revoke === 'all' ? state.tokens : [state.token!];
          for (const token of revoked) Object.assign(issued.get(token)!, { revoked: true, maybeRevoked: false });
          state.tokens = context.revoke === 'all' ? [] : state.tokens.filter((token) => token !== state.token);
          state.token = null;
          context.revoked = true;
          counts[context.revoke === 'all' ? 'revokedAll' : 'revokedCurrent'] += 1;
        },
      },
      // 3. Who am I: the right user with the last name written, or 401 at once for the token just revoked.
      {
        setupRequest: (request, context) => {
          if (context.token === null) return { ...request, method: 'GET', path: '/api/posts', headers: { accept: 'application/json' }, body: undefined };
          return { ...request, method: 'GET', path: '/api/user', headers: auth(context.token as string), body: undefined };
        },
        onResponse: (status, body, context) => {
          const state = holder(context)!;
          if (context.token === null) return void expect('GET /api/posts', [200], status);
          if (context.revoked === true) return void expect('GET /api/user with the revoked token', [401, 429], status, body);
          if (!expect('GET /api/user', [200, 429], status, body) || status !== 200) return;
          const user = JSON.parse(body) as { id: number; name: string };
          counts.reads += 1;
          if (user.id !== state.user.id) unexpected.push(`GET /api/user answered user ${user.id} for ${state.user.id}`);
          if (state.lastName !== null && user.name !== state.lastName) unexpected.push(`GET /api/user: name ${user.name}, last written ${state.lastName}`);
        },
      },
      // 4. The public list, on one of its pages; then the user is free again.
      {
        setupRequest: (request, context) => ({ ...request, method: 'GET', path: `/api/posts?page=${((context.seq as number) % 3) + 1}&per_page=10`, headers: { accept: 'application/json' }, body: undefined }),
        onResponse: (status, body, context) => {
          if (expect('GET /api/posts', [200, 429], status) && status === 200) {
            const page = JSON.parse(body) as { data: unknown[] };
            if (!Array.isArray(page.data) || page.data.length === 0) unexpected.push('GET /api/posts: no items');
          }
          free.push(holder(context)!);
        },
      },
    ];

    // A request counts as timed out only after two minutes: no answer at all, not a slow one.
    const result = await cannon({ url: server.url, connections: CONNECTIONS, amount: REQUESTS, timeout: 120, requests });

    // Afterwards, over fresh connections: every issued token works unless it was revoked.
    const tokens = [...issued.values()];
    const wrong: string[] = [];
    for (let start = 0; start < tokens.length; start += 50) {
      await Promise.all(
        tokens.slice(start, start + 50).map(async ({ token, userId, revoked, maybeRevoked }) => {
          const response = await fetch(`${server.url}/api/user`, { headers: { authorization: `Bearer ${token}`, accept: 'application/json' } });
          const body = (await response.json()) as { id?: number };
          if (maybeRevoked && !revoked) return void (response.status === 200 || response.status === 401 || wrong.push(`token of user ${userId} answered ${response.status}`));
          if (revoked && response.status !== 401) wrong.push(`revoked token of user ${userId} answered ${response.status}`);
          if (!revoked && (response.status !== 200 || body.id !== userId)) wrong.push(`live token of user ${userId} answered ${response.status}`);
        }),
      );
    }
    // Every acknowledged write is in the database (each user's writes were sequential).
    const rows = await database.db.kysely.selectFrom('users').select(['id', 'name']).execute();
    const names = new Map(rows.map((row) => [row.id, row.name]));
    const lost = users.filter((state) => state.lastName !== null && names.get(state.user.id) !== state.lastName && names.get(state.user.id) !== state.pendingName);

    const statuses = Object.entries(result.statusCodeStats)
      .map(([code, { count }]) => `${code}=${count}`)
      .join(' ');
    const revoked = tokens.filter((t) => t.revoked).length;
    console.log(
      `FIGURES load: db=${onPostgres ? 'postgres' : 'sqlite'} connections=${CONNECTIONS} requests=${result.requests} rps=${Math.round(result.rps)} ` +
        `p50=${result.p50}ms p99=${result.p99}ms errors=${result.errors} timeouts=${result.timeouts} statuses=[${statuses}] unexpected=${unexpected.length} ` +
        `tokens_issued=${counts.issued} (+${USERS} seeded) tokens_revoked=${revoked} tokens_checked_after=${tokens.length} token_failures=${wrong.length} ` +
        `writes_acked=${counts.writes} users_written=${users.filter((s) => s.lastName !== null).length} writes_lost=${lost.length}`,
    );

    assert.equal(result.errors, 0, 'connection errors');
    assert.equal(result.timeouts, 0, 'timeouts');
    assert.deepEqual(unexpected.slice(0, 10), [], 'unexpected answers');
    assert.deepEqual(wrong.slice(0, 10), [], 'tokens after the load');
    assert.deepEqual(
      lost.slice(0, 10).map((s) => `${s.user.id}: ${names.get(s.user.id)} != ${s.lastName}`),
      [],
      'acknowledged writes missing',
    );
    // The mix really ran: it issued, read, wrote and revoked.
    assert.ok(counts.issued > 0 && counts.reads > 0 && counts.writes > 0 && counts.revokedCurrent + counts.revokedAll > 0, JSON.stringify(counts));
  });
});
