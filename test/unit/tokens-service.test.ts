// TokenService.prune (tokens:prune) and the service's issue/revoke, on the real test database.
import assert from 'node:assert/strict';
import { after, before, beforeEach, describe, it } from 'node:test';
import { TokenService } from '../../src/modules/tokens/tokens.service.js';
import { keptTokenLookup } from '../../src/perf/kept-reads.js';
import { createTestDatabase, onPostgres, type TestDatabase } from '../helpers.js';
import { needsPostgres, sqliteOnly } from '../support/services.js';

const HOUR = 3_600_000;
const at = (offsetMs: number) => new Date(Date.now() + offsetMs).toISOString();

async function insertUser(database: TestDatabase, email: string): Promise<number> {
  const now = new Date().toISOString();
  const user = await database.db.kysely
    .insertInto('users')
    .values({ name: 'U', email, password: 'x', email_verified_at: null, is_admin: 0, remember_token: null, locale: null, created_at: now, updated_at: now })
    .returning('id')
    .executeTakeFirstOrThrow();
  return user.id;
}

describe('TokenService.prune', () => {
  let database: TestDatabase;
  let userId: number;

  before(async () => {
    database = await createTestDatabase();
    userId = await insertUser(database, 'u@example.com');
  });
  beforeEach(async () => {
    await database.db.kysely.deleteFrom('personal_access_tokens').execute();
  });
  after(() => database.drop());

  async function token(name: string, createdAt: string, expiresAt: string | null): Promise<void> {
    await database.db.kysely
      .insertInto('personal_access_tokens')
      .values({ user_id: userId, name, token: name.padEnd(64, '0'), abilities: '["*"]', last_used_at: null, expires_at: expiresAt, created_at: createdAt, updated_at: createdAt })
      .execute();
  }
  const names = async () =>
    (await database.db.kysely.selectFrom('personal_access_tokens').select('name').orderBy('name').execute()).map((row) => row.name);

  it('deletes tokens whose expires_at has passed and keeps the others', async () => {
    const service = new TokenService(database.db, { tokenExpirationMinutes: null, tokenPrefix: '' });
    await token('expired', at(-2 * HOUR), at(-HOUR));
    await token('valid', at(-2 * HOUR), at(HOUR));
    await token('forever', at(-1000 * HOUR), null);
    assert.equal(await service.prune(), 1);
    assert.deepEqual(await names(), ['forever', 'valid']);
  });

  it('with --hours N, deletes only tokens expired more than N hours ago', async () => {
    const service = new TokenService(database.db, { tokenExpirationMinutes: null, tokenPrefix: '' });
    await token('expired-1h', at(-3 * HOUR), at(-HOUR));
    await token('expired-30h', at(-40 * HOUR), at(-30 * HOUR));
    await token('valid', at(-HOUR), at(HOUR));
    assert.equal(await service.prune(24), 1);
    assert.deepEqual(await names(), ['expired-1h', 'valid']);
  });

  it('with a global expiration, also deletes tokens older than it (plus N hours)', async () => {
    const service = new TokenService(database.db, { tokenExpirationMinutes: 60, tokenPrefix: '' });
    await token('young', at(-30 * 60_000), null);
    await token('aged-2h', at(-2 * HOUR), null);
    await token('aged-10h', at(-10 * HOUR), null);
    assert.equal(await service.prune(5), 1);
    assert.deepEqual(await names(), ['aged-2h', 'young']);
    assert.equal(await service.prune(), 1);
    assert.deepEqual(await names(), ['young']);
  });

  it('deletes nothing when nothing has expired', async () => {
    const service = new TokenService(database.db, { tokenExpirationMinutes: null, tokenPrefix: '' });
    await token('valid', at(-HOUR), at(HOUR));
    assert.equal(await service.prune(), 0);
    assert.deepEqual(await names(), ['valid']);
  });
});

// authenticate() with the lookup the app uses (kept in memory while the database is unchanged,
// src/perf/kept-reads.ts): it answers at once (not a promise) only for a token it keeps whose
// last use needs no write, and never says more than a fresh lookup would: a change anywhere
// drops what it keeps.
describe(`TokenService.authenticate with the kept lookup (${onPostgres ? 'PostgreSQL' : 'SQLite file'})`, () => {
  let database: TestDatabase;
  let service: TokenService;
  let userId: number;
  const config = { tokenExpirationMinutes: null, tokenPrefix: '' };
  // The answer if it came at once; `later` if it is a promise (awaited, so the test goes on in order).
  const later = Symbol('later');
  const atOnce = async (plaintext: string) => {
    const answer = service.authenticate(service.parse(plaintext));
    if (answer instanceof Promise) {
      await answer;
      return later;
    }
    return answer;
  };

  before(async () => {
    database = await createTestDatabase({ file: true });
    userId = await insertUser(database, 'k@example.com');
    service = new TokenService(database.db, config, keptTokenLookup(database.db, config));
  });
  after(() => database.drop());

  // On SQLite the change counter is read without a query, so a kept token can be answered at
  // once; on PostgreSQL it is a query, so only the first test below runs there.
  const atOnceOnSqlite = sqliteOnly('the change counter is a query on PostgreSQL, so nothing is answered at once');

  it('answers nothing at once on PostgreSQL (the change counter is a query)', { skip: needsPostgres }, async () => {
    const { plaintext } = await service.issue(userId, 'pg');
    assert.equal((await service.authenticate(service.parse(plaintext)))?.user.id, userId);
    assert.equal(await atOnce(plaintext), later);
    assert.equal((await service.authenticate(service.parse(plaintext)))?.user.id, userId);
  });

  it('answers a kept token at once, and the same caller as before', { skip: atOnceOnSqlite }, async () => {
    const { plaintext } = await service.issue(userId, 'kept');
    assert.equal(await atOnce(plaintext), later, 'not read yet');
    // The first use writes last_used_at (which drops the cache); the next read keeps the token.
    await service.authenticate(service.parse(plaintext));
    const read = await service.authenticate(service.parse(plaintext));
    assert.equal(read?.user.id, userId);
    assert.equal(await atOnce(plaintext), read);
  });

  it('refuses a wrong secret at once, and a malformed token without a lookup', { skip: atOnceOnSqlite }, async () => {
    const { plaintext, id } = await service.issue(userId, 'wrong');
    const other = await service.issue(userId, 'other');
    const secretOf = (token: string) => token.slice(token.indexOf('|') + 1);
    await service.authenticate(service.parse(plaintext));
    await service.authenticate(service.parse(plaintext));
    assert.equal(((await atOnce(plaintext)) as { tokenId: number } | null)?.tokenId, id);
    // A kept id with another token's (well-formed) secret.
    assert.equal(await atOnce(`${id}|${secretOf(other.plaintext)}`), null);
    // A broken checksum, and no token at all: not even parsed.
    assert.equal(service.parse(`${id}|${secretOf(plaintext).slice(0, -1)}x`), null);
    assert.equal(service.parse('not a token'), null);
    assert.equal(service.authenticate(null), null);
  });

  it('looks a revoked token up again, and refuses it', { skip: atOnceOnSqlite }, async () => {
    const { plaintext, id } = await service.issue(userId, 'revoked');
    await service.authenticate(service.parse(plaintext));
    await service.authenticate(service.parse(plaintext));
    assert.notEqual(await atOnce(plaintext), later);
    // Revoked by another connection (another instance, the CLI).
    await database.connectAgain().kysely.deleteFrom('personal_access_tokens').where('id', '=', id).execute();
    assert.equal(await atOnce(plaintext), later);
    assert.equal(await service.authenticate(service.parse(plaintext)), null);
    assert.equal(await atOnce(plaintext), later, 'a token not found is not kept');
  });

  it('refuses a kept token once it has expired', { skip: atOnceOnSqlite }, async () => {
    const { plaintext, id } = await service.issue(userId, 'expiring');
    await database.db.kysely.updateTable('personal_access_tokens').set({ expires_at: at(1_000) }).where('id', '=', id).execute();
    await service.authenticate(service.parse(plaintext));
    await service.authenticate(service.parse(plaintext));
    assert.equal(((await atOnce(plaintext)) as { tokenId: number } | null)?.tokenId, id);
    await new Promise((resolve) => setTimeout(resolve, 1_100));
    assert.equal(await atOnce(plaintext), null);
  });

  it('writes the last use of a kept token once it has come due, then answers at once again', { skip: atOnceOnSqlite }, async () => {
    const { plaintext, id } = await service.issue(userId, 'due');
    // Last written 59.5 s ago: not due yet (once a minute), so reading it writes nothing and keeps it.
    const almost = at(-59_500);
    await database.db.kysely.updateTable('personal_access_tokens').set({ last_used_at: almost }).where('id', '=', id).execute();
    await service.authenticate(service.parse(plaintext));
    assert.equal(((await atOnce(plaintext)) as { tokenId: number } | null)?.tokenId, id);
    await new Promise((resolve) => setTimeout(resolve, 700));
    const lastUsed = async () =>
      (await database.db.kysely.selectFrom('personal_access_tokens').select('last_used_at').where('id', '=', id).executeTakeFirstOrThrow()).last_used_at;
    assert.equal(await lastUsed(), almost);
    assert.equal(await atOnce(plaintext), later, 'the write is awaited');
    assert.notEqual(await lastUsed(), almost, 'the last use was written');
    assert.equal((await service.authenticate(service.parse(plaintext)))?.tokenId, id);
  });
});
