// TokenService.prune (tokens:prune) and the service's issue/revoke, on the real test database.
import assert from 'node:assert/strict';
import { after, before, beforeEach, describe, it } from 'node:test';
import { TokenService } from '../../src/modules/tokens/tokens.service.js';
import { createTestDatabase, type TestDatabase } from '../helpers.js';

const HOUR = 3_600_000;
const at = (offsetMs: number) => new Date(Date.now() + offsetMs).toISOString();

describe('TokenService.prune', () => {
  let database: TestDatabase;
  let userId: number;

  before(async () => {
    database = await createTestDatabase();
    const now = new Date().toISOString();
    const user = await database.db.kysely
      .insertInto('users')
      .values({ name: 'U', email: 'u@example.com', password: 'x', email_verified_at: null, is_admin: 0, remember_token: null, locale: null, created_at: now, updated_at: now })
      .returning('id')
      .executeTakeFirstOrThrow();
    userId = user.id;
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
