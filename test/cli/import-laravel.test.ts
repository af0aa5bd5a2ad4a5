// db:import-laravel: a Laravel + Sanctum app's users and tokens, from a database laid out as
// Laravel's own migrations lay it out (SQLite file; PostgreSQL too when the suite runs there),
// with Laravel's timestamp format and bcrypt $2y$ hashes. After the import the app's tokens work
// as they did, the passwords sign in, and new ids come after the imported ones.
import assert from 'node:assert/strict';
import { createHash, randomBytes } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import SQLite from 'better-sqlite3';
import bcrypt from 'bcryptjs';
import type { FastifyInstance } from 'fastify';
import pg from 'pg';
import { buildApp } from '../../src/app.js';
import { laravelTimestamp } from '../../src/modules/import/laravel.js';
import { TEST_DATABASE_URL, onPostgres, testConfig } from '../helpers.js';
import { sanctumSecret } from '../api/support.js';
import { withSearchPath } from '../load/server-process.js';
import { createCliHarness, runInProcess, type CliHarness } from './harness.js';

// The tables as Laravel 11's migrations create them (users, personal_access_tokens).
const LARAVEL_SQLITE = [
  'create table "users" ("id" integer primary key autoincrement not null, "name" varchar not null, "email" varchar not null, "email_verified_at" datetime, "password" varchar not null, "remember_token" varchar, "created_at" datetime, "updated_at" datetime)',
  'create unique index "users_email_unique" on "users" ("email")',
  'create table "personal_access_tokens" ("id" integer primary key autoincrement not null, "tokenable_type" varchar not null, "tokenable_id" integer not null, "name" varchar not null, "token" varchar not null, "abilities" text, "last_used_at" datetime, "expires_at" datetime, "created_at" datetime, "updated_at" datetime)',
  'create unique index "personal_access_tokens_token_unique" on "personal_access_tokens" ("token")',
];
const LARAVEL_POSTGRES = [
  'create table users (id bigserial primary key not null, name varchar(255) not null, email varchar(255) not null unique, email_verified_at timestamp(0) without time zone null, password varchar(255) not null, remember_token varchar(100) null, created_at timestamp(0) without time zone null, updated_at timestamp(0) without time zone null)',
  'create table personal_access_tokens (id bigserial primary key not null, tokenable_type varchar(255) not null, tokenable_id bigint not null, name text not null, token varchar(64) not null unique, abilities text null, last_used_at timestamp(0) without time zone null, expires_at timestamp(0) without time zone null, created_at timestamp(0) without time zone null, updated_at timestamp(0) without time zone null)',
];

const PASSWORD = 'laravel-secret-1';
const sha256 = (text: string) => createHash('sha256').update(text).digest('hex');

type Source = { url: string; tokens: { valid: string; readOnly: string; expired: string }; hash(): string; close(): Promise<void> };

type Row = Record<string, string | number | null>;

/** What a Laravel app would hold: two users (ids 7 and 9), tokens 40–43, one of a Team model. */
async function laravelRows(): Promise<{ users: Row[]; tokens: Row[]; plain: Source['tokens'] }> {
  const hash = (await bcrypt.hash(PASSWORD, 4)).replace(/^\$2b\$/, '$2y$');
  const secrets = [sanctumSecret(), sanctumSecret(), sanctumSecret(), sanctumSecret()];
  const users: Row[] = [
    { id: 7, name: 'Ada Laravel', email: 'ada@laravel.test', email_verified_at: '2025-03-01 10:21:00', password: hash, remember_token: 'r'.repeat(60), created_at: '2025-03-01 10:20:30', updated_at: '2025-03-02 08:00:00' },
    { id: 9, name: 'Bob Laravel', email: 'bob@laravel.test', email_verified_at: null, password: hash, remember_token: null, created_at: '2025-04-01 00:00:00', updated_at: '2025-04-01 00:00:00' },
  ];
  const token = (id: number, type: string, owner: number, i: number, abilities: string, expires: string | null): Row => ({
    id, tokenable_type: type, tokenable_id: owner, name: `device-${id}`, token: sha256(secrets[i]!), abilities, last_used_at: '2025-05-01 12:00:00', expires_at: expires, created_at: '2025-03-01 11:00:00', updated_at: '2025-03-01 11:00:00',
  });
  const tokens = [
    token(40, 'App\\Models\\User', 7, 0, '["*"]', null),
    token(41, 'App\\Models\\User', 9, 1, '["posts:read"]', '2999-01-01 00:00:00'),
    token(42, 'App\\Models\\User', 7, 2, '["*"]', '2020-01-01 00:00:00'),
    token(43, 'App\\Models\\Team', 7, 3, '["*"]', null),
  ];
  return { users, tokens, plain: { valid: `40|${secrets[0]}`, readOnly: `41|${secrets[1]}`, expired: `42|${secrets[2]}` } };
}

function insertSql(table: string, row: Row, placeholder: (i: number) => string): [string, (string | number | null)[]] {
  const columns = Object.keys(row);
  return [`insert into ${table} (${columns.join(', ')}) values (${columns.map((_, i) => placeholder(i)).join(', ')})`, Object.values(row)];
}

/** Columns an app dropped (or its Laravel version never had), per table. */
type Dropped = { users?: string[]; personal_access_tokens?: string[] };

/** The drop statements, and the rows without the dropped columns. */
function dropColumns(rows: { users: Row[]; tokens: Row[] }, dropped: Dropped): string[] {
  for (const column of dropped.users ?? []) for (const row of rows.users) delete row[column];
  for (const column of dropped.personal_access_tokens ?? []) for (const row of rows.tokens) delete row[column];
  // SQLite drops no column an index uses: the unique index on email or token goes first.
  const indexOf: Record<string, string> = { email: 'users_email_unique', token: 'personal_access_tokens_token_unique' };
  return Object.entries(dropped).flatMap(([table, columns]) =>
    (columns as string[]).flatMap((column) => [...(column in indexOf ? [`drop index if exists ${indexOf[column]}`] : []), `alter table ${table} drop column ${column}`]),
  );
}

async function sqliteSource(change: (rows: { users: Row[]; tokens: Row[] }) => void = () => undefined, dropped: Dropped = {}): Promise<Source> {
  const dir = mkdtempSync(join(tmpdir(), 'laravel-'));
  const path = join(dir, 'database.sqlite');
  const rows = await laravelRows();
  change(rows);
  const sqlite = new SQLite(path);
  for (const statement of [...LARAVEL_SQLITE, ...dropColumns(rows, dropped)]) sqlite.exec(statement);
  for (const [table, list] of [['users', rows.users], ['personal_access_tokens', rows.tokens]] as const) {
    for (const row of list) {
      const [text, values] = insertSql(table, row, () => '?');
      sqlite.prepare(text).run(...values);
    }
  }
  sqlite.close();
  return { url: `sqlite:${path}`, tokens: rows.plain, hash: () => sha256(readFileSync(path, 'latin1')), close: async () => rmSync(dir, { recursive: true, force: true }) };
}

async function postgresSource(dropped: Dropped = {}): Promise<Source> {
  const schema = `laravel_${randomBytes(5).toString('hex')}`;
  const client = new pg.Client({ connectionString: TEST_DATABASE_URL });
  await client.connect();
  const rows = await laravelRows();
  await client.query(`create schema ${schema}`);
  await client.query(`set search_path to ${schema}`);
  for (const statement of [...LARAVEL_POSTGRES, ...dropColumns(rows, dropped)]) await client.query(statement);
  for (const [table, list] of [['users', rows.users], ['personal_access_tokens', rows.tokens]] as const) {
    for (const row of list) await client.query(...insertSql(table, row, (i) => `$${i + 1}`));
  }
  return {
    url: withSearchPath(TEST_DATABASE_URL, schema),
    tokens: rows.plain,
    hash: () => '',
    close: async () => {
      await client.query(`drop schema ${schema} cascade`);
      await client.end();
    },
  };
}

async function counts(h: CliHarness): Promise<[number, number]> {
  const n = async (table: 'users' | 'personal_access_tokens') => Number((await h.db.kysely.selectFrom(table).select((eb) => eb.fn.countAll().as('n')).executeTakeFirstOrThrow()).n);
  return [await n('users'), await n('personal_access_tokens')];
}

for (const kind of ['sqlite', ...(onPostgres ? ['postgres'] : [])] as const) {
  describe(`db:import-laravel from a Laravel ${kind === 'sqlite' ? 'SQLite file' : 'PostgreSQL database'}`, () => {
    let h: CliHarness;
    let source: Source;
    let app: FastifyInstance;
    let before_: string;

    before(async () => {
      h = await createCliHarness();
      source = kind === 'sqlite' ? await sqliteSource() : await postgresSource();
      before_ = source.hash();
      const result = await h.cli(['db:import-laravel', '--from', source.url]);
      assert.equal(result.code, 0, result.stderr);
      assert.equal(result.stdout, 'Imported 2 users and 3 tokens (1 token of another model or of no user skipped).\n');
      app = await buildApp(testConfig(), { db: h.db });
    });
    after(async () => {
      await app.close();
      await h.close();
      await source.close();
    });

    const user = (token: string) => app.inject({ url: '/api/user', headers: { authorization: `Bearer ${token}`, accept: 'application/json' } });

    it("keeps the app's tokens working, with their ids, and the users' timestamps as ISO-8601 UTC", async () => {
      const response = await user(source.tokens.valid);
      assert.equal(response.statusCode, 200, response.body);
      assert.deepEqual(response.json(), {
        id: 7,
        name: 'Ada Laravel',
        email: 'ada@laravel.test',
        email_verified_at: '2025-03-01T10:21:00.000Z',
        created_at: '2025-03-01T10:20:30.000Z',
        updated_at: '2025-03-02T08:00:00.000Z',
      });
      assert.equal((await user(source.tokens.readOnly)).json().id, 9);
    });

    it('keeps expiry dates (an expired token is refused) and abilities, and skips tokens of other models', async () => {
      assert.equal((await user(source.tokens.expired)).statusCode, 401);
      const rows = await h.db.kysely.selectFrom('personal_access_tokens').select(['id', 'user_id', 'abilities', 'expires_at', 'last_used_at']).orderBy('id').execute();
      assert.deepEqual(rows.map((r) => r.id), [40, 41, 42]);
      assert.equal(rows[1]?.abilities, '["posts:read"]');
      assert.equal(rows[1]?.expires_at, '2999-01-01T00:00:00.000Z');
      assert.equal(rows[2]?.last_used_at, '2025-05-01T12:00:00.000Z');
    });

    it('signs in with the Laravel password, rehashing it to argon2id', async () => {
      const response = await app.inject({ method: 'POST', url: '/api/tokens', payload: { email: 'bob@laravel.test', password: PASSWORD, device_name: 'after import' } });
      assert.equal(response.statusCode, 200, response.body);
      const token = (response.json() as { token: string }).token;
      assert.ok(Number(token.split('|')[0]) > 42, `a new token id after the imported ones: ${token.split('|')[0]}`);
      const row = await h.db.kysely.selectFrom('users').select(['password', 'remember_token', 'is_admin']).where('id', '=', 9).executeTakeFirstOrThrow();
      assert.match(row.password ?? '', /^\$argon2id\$/);
    });

    it('carries no remember token and makes nobody an administrator; new accounts come after the imported ids', async () => {
      const ada = await h.db.kysely.selectFrom('users').select(['remember_token', 'is_admin']).where('id', '=', 7).executeTakeFirstOrThrow();
      assert.equal(ada.remember_token, null);
      assert.equal(Number(ada.is_admin), 0);
      const created = await h.cli(['user:create', '--name', 'New', '--email', 'new@example.com', '--password', 'a fresh password 1']);
      assert.equal(created.code, 0, created.stderr);
      assert.match(created.stdout, /^Created user #10 /);
    });

    it('leaves the Laravel database as it was', { skip: kind === 'postgres' ? 'compared on the SQLite file' : false }, () => {
      assert.equal(source.hash(), before_);
    });

    it('refuses a second import into a database that has users, changing nothing', async () => {
      const before = await counts(h);
      const result = await h.cli(['db:import-laravel', '--from', source.url]);
      assert.equal(result.code, 1);
      assert.match(result.stderr, /^Nothing imported: This database already has users or tokens/);
      assert.deepEqual(await counts(h), before);
    });
  });
}

// Columns Laravel apps drop or Laravel versions lack: each, missing alone, imports as empty and
// the summary names it; the app's tokens still answer and the bcrypt passwords still sign in.
const SUMMARY = 'Imported 2 users and 3 tokens (1 token of another model or of no user skipped).';
const OPTIONAL: { dropped: Dropped; named: string }[] = [
  { dropped: { users: ['email_verified_at'] }, named: 'users.email_verified_at (no email verified)' },
  { dropped: { users: ['remember_token'] }, named: 'users.remember_token (none)' },
  { dropped: { users: ['created_at'] }, named: 'users.created_at (the time of the import)' },
  { dropped: { users: ['updated_at'] }, named: 'users.updated_at (the creation date)' },
  { dropped: { personal_access_tokens: ['abilities'] }, named: 'personal_access_tokens.abilities (no abilities)' },
  { dropped: { personal_access_tokens: ['last_used_at'] }, named: 'personal_access_tokens.last_used_at (never used)' },
  { dropped: { personal_access_tokens: ['expires_at'] }, named: 'personal_access_tokens.expires_at (no expiry date of their own)' },
  { dropped: { personal_access_tokens: ['created_at', 'updated_at'] }, named: 'personal_access_tokens.created_at (the time of the import), personal_access_tokens.updated_at (the creation date)' },
];

for (const kind of ['sqlite', ...(onPostgres ? ['postgres'] : [])] as const) {
  describe(`db:import-laravel from a ${kind === 'sqlite' ? 'SQLite' : 'PostgreSQL'} users or tokens table without an optional column`, () => {
    /** Imports a source without these columns into a new database; the checks get the app on it. */
    const importWithout = async (dropped: Dropped, check: (result: { stdout: string; app: FastifyInstance; h: CliHarness; source: Source; startedAt: string; endedAt: string }) => Promise<void>) => {
      const h = await createCliHarness();
      const source = kind === 'sqlite' ? await sqliteSource(undefined, dropped) : await postgresSource(dropped);
      let app: FastifyInstance | undefined;
      try {
        const startedAt = new Date().toISOString();
        const result = await h.cli(['db:import-laravel', '--from', source.url]);
        const endedAt = new Date().toISOString();
        assert.equal(result.code, 0, result.stderr);
        app = await buildApp(testConfig(), { db: h.db });
        await check({ stdout: result.stdout, app, h, source, startedAt, endedAt });
      } finally {
        await app?.close();
        await h.close();
        await source.close();
      }
    };
    const get = (app: FastifyInstance, token: string) => app.inject({ url: '/api/user', headers: { authorization: `Bearer ${token}`, accept: 'application/json' } });
    const signIn = (app: FastifyInstance) => app.inject({ method: 'POST', url: '/api/tokens', payload: { email: 'ada@laravel.test', password: PASSWORD, device_name: 'after import' } });

    for (const { dropped, named } of OPTIONAL) {
      const columns = Object.entries(dropped).flatMap(([table, list]) => (list as string[]).map((column) => `${table}.${column}`));
      it(`imports without ${columns.join(' and ')}, naming it in the summary; the token answers and the password signs in`, () =>
        importWithout(dropped, async ({ stdout, app, h, source, startedAt, endedAt }) => {
          assert.equal(stdout, `${SUMMARY}\nMissing in the Laravel database, so imported as empty: ${named}.\n`);
          // Read before the token is used (which sets last_used_at).
          const tokens = await h.db.kysely.selectFrom('personal_access_tokens').selectAll().orderBy('id').execute();
          const response = await get(app, source.tokens.valid);
          assert.equal(response.statusCode, 200, response.body);
          const ada = response.json() as { id: number; email_verified_at: string | null; created_at: string; updated_at: string };
          assert.equal(ada.id, 7);
          assert.equal(ada.email_verified_at, dropped.users?.includes('email_verified_at') ? null : '2025-03-01T10:21:00.000Z');
          if (dropped.users?.includes('created_at')) {
            assert.ok(ada.created_at >= startedAt && ada.created_at <= endedAt, `created_at is the import time: ${ada.created_at}`);
            assert.equal(ada.updated_at, '2025-03-02T08:00:00.000Z');
          }
          if (dropped.users?.includes('updated_at')) assert.deepEqual([ada.created_at, ada.updated_at], ['2025-03-01T10:20:30.000Z', '2025-03-01T10:20:30.000Z']);
          assert.deepEqual(tokens.map((row) => row.id), [40, 41, 42]);
          if (dropped.personal_access_tokens?.includes('abilities')) assert.deepEqual(tokens.map((row) => row.abilities), ['[]', '[]', '[]']);
          if (dropped.personal_access_tokens?.includes('last_used_at')) assert.deepEqual(tokens.map((row) => row.last_used_at), [null, null, null]);
          if (dropped.personal_access_tokens?.includes('expires_at')) assert.deepEqual(tokens.map((row) => row.expires_at), [null, null, null]);
          if (dropped.personal_access_tokens?.includes('created_at')) {
            for (const row of tokens) assert.ok(row.created_at >= startedAt && row.created_at <= endedAt && row.updated_at === row.created_at, `import time: ${row.created_at}`);
          }
          const signedIn = await signIn(app);
          assert.equal(signedIn.statusCode, 200, signedIn.body);
        }));
    }

    it('imports a users table with none of the optional columns and tokens without their optional columns, naming them all', () =>
      importWithout({ users: ['email_verified_at', 'remember_token', 'created_at', 'updated_at'], personal_access_tokens: ['abilities', 'last_used_at', 'expires_at', 'created_at', 'updated_at'] }, async ({ stdout, app, source }) => {
        const lines = stdout.trimEnd().split('\n');
        assert.equal(lines[0], SUMMARY);
        assert.equal(
          lines[1],
          'Missing in the Laravel database, so imported as empty: users.email_verified_at (no email verified), users.remember_token (none), users.created_at (the time of the import), users.updated_at (the creation date), personal_access_tokens.abilities (no abilities), personal_access_tokens.last_used_at (never used), personal_access_tokens.expires_at (no expiry date of their own), personal_access_tokens.created_at (the time of the import), personal_access_tokens.updated_at (the creation date).',
        );
        assert.equal((await get(app, source.tokens.valid)).statusCode, 200);
        assert.equal((await signIn(app)).statusCode, 200);
      }));
  });
}

describe('db:import-laravel refusals', () => {
  let h: CliHarness;
  before(async () => (h = await createCliHarness()));
  after(() => h.close());

  const refused = async (pending: Promise<Source> | string, message: RegExp, code = 1) => {
    const source = await pending;
    const url = typeof source === 'string' ? source : source.url;
    // In-process (the import itself runs as a real process above): eight more CLI processes
    // would add seconds to every run for the same code path.
    const result = await runInProcess(['db:import-laravel', ...(url === '' ? [] : ['--from', url])], { db: h.db, config: testConfig() });
    if (typeof source !== 'string') await source.close();
    assert.equal(result.code, code, result.stderr);
    assert.equal(result.stdout, '');
    assert.match(result.stderr, message);
    assert.equal(result.stderr.trimEnd().split('\n').length, 1, result.stderr);
    assert.deepEqual(await counts(h), [0, 0], 'nothing imported');
  };

  it('refuses a malformed token digest, importing nothing (not even the users)', () =>
    refused(
      sqliteSource((rows) => (rows.tokens[1]!.token = 'not-a-digest')),
      /^Nothing imported: personal_access_tokens #41: token must be the 64 hex characters of a SHA-256 digest\./,
    ));

  it('refuses abilities that are not a JSON array of names', () =>
    refused(sqliteSource((rows) => (rows.tokens[0]!.abilities = '{"admin":true}')), /^Nothing imported: personal_access_tokens #40: abilities must be a JSON array/));

  it('refuses two emails that differ only in case', () =>
    refused(sqliteSource((rows) => (rows.users[1]!.email = 'ADA@laravel.test')), /^Nothing imported: users #7 and #9 have the same email apart from case/));

  it('refuses a users table without one of id, name, email and password, naming the missing column', async () => {
    for (const column of ['id', 'name', 'email', 'password']) {
      const source =
        column === 'id'
          ? // SQLite cannot drop a primary key column: the table is made without one named id.
            sqliteSource().then((made) => {
              const sqlite = new SQLite(made.url.slice('sqlite:'.length));
              sqlite.exec('alter table users rename column id to user_id');
              sqlite.close();
              return made;
            })
          : sqliteSource(undefined, { users: [column] });
      await refused(source, new RegExp(`^Nothing imported: The Laravel users table has no ${column} column, which the import needs \\(id, name, email, password\\)\\.$`, 'm'));
    }
  });

  it('refuses a personal_access_tokens table without its token digest, naming the column', () =>
    refused(sqliteSource(undefined, { personal_access_tokens: ['token'] }), /^Nothing imported: The Laravel personal_access_tokens table has no token column, which the import needs \(id, tokenable_type, tokenable_id, name, token\)\.$/m));

  it('refuses a timestamp it cannot read', () => refused(sqliteSource((rows) => (rows.users[0]!.created_at = 'yesterday')), /^Nothing imported: users #7: created_at is not a date: "yesterday"\./));

  it('refuses a file without Laravel tables, a missing file, another kind of URL, and no --from', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'not-laravel-'));
    const empty = new SQLite(join(dir, 'empty.sqlite'));
    empty.close();
    try {
      await refused(`sqlite:${join(dir, 'empty.sqlite')}`, /^Nothing imported: The Laravel database has no readable users table/);
      await refused(`sqlite:${join(dir, 'missing.sqlite')}`, /^Nothing imported: Cannot open the Laravel database/);
      await refused('mysql://root@127.0.0.1/laravel', /^Nothing imported: --from must be a sqlite:PATH or postgres:\/\/ URL/);
      await refused('', /^Missing --from\./, 2);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('Laravel timestamps', () => {
  it('reads the text Laravel writes as UTC, with fractions and zones as given', () => {
    assert.equal(laravelTimestamp('2025-03-01 10:20:30', 'x'), '2025-03-01T10:20:30.000Z');
    assert.equal(laravelTimestamp('2025-03-01 10:20:30.123456', 'x'), '2025-03-01T10:20:30.123Z');
    assert.equal(laravelTimestamp('2025-03-01 10:20:30+02', 'x'), '2025-03-01T08:20:30.000Z');
    assert.equal(laravelTimestamp('2025-03-01T10:20:30-01:30', 'x'), '2025-03-01T11:50:30.000Z');
    assert.equal(laravelTimestamp('2025-03-01T10:20:30.000Z', 'x'), '2025-03-01T10:20:30.000Z');
    assert.equal(laravelTimestamp(new Date(Date.UTC(2025, 2, 1)), 'x'), '2025-03-01T00:00:00.000Z');
    assert.equal(laravelTimestamp(null, 'x'), null);
  });

  it('refuses anything else, naming where it was', () => {
    for (const value of ['2025-13-01 00:00:00', '01/03/2025', '', 1740824430, '2025-03-01']) {
      assert.throws(() => laravelTimestamp(value, 'users #1: created_at'), /^Error: users #1: created_at is not a date/);
    }
  });
});
