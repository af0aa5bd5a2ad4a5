// The data layer's promises: SQLite pragmas, write transactions that lock up front, and the
// constraints the API relies on (case-insensitive unique email, unique token digest, a slug
// unique per language, a user's tokens deleted with the user), on SQLite and PostgreSQL alike.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { connect, writeTransaction } from '../../src/db/connect.js';
import { isUniqueViolation } from '../../src/db/errors.js';
import { migrateToLatest, retryingCatalogRace } from '../../src/db/migrator.js';
import { createTestDatabase, type TestDatabase } from '../helpers.js';

describe('SQLite file database', () => {
  const dir = mkdtempSync(join(tmpdir(), 'tessera-db-'));
  after(() => rmSync(dir, { recursive: true, force: true }));

  it('runs in WAL mode, synchronous NORMAL, foreign keys on, with a busy timeout', async () => {
    const db = connect(`sqlite:${join(dir, 'pragmas.db')}`);
    try {
      const handle = db.sqlite;
      assert.ok(handle);
      assert.equal(handle.pragma('journal_mode', { simple: true }), 'wal');
      assert.equal(handle.pragma('synchronous', { simple: true }), 1);
      assert.equal(handle.pragma('foreign_keys', { simple: true }), 1);
      assert.ok(Number(handle.pragma('busy_timeout', { simple: true })) > 0);
    } finally {
      await db.close();
    }
  });

  it('takes the write lock when a write transaction begins, before its first read', async () => {
    const path = `sqlite:${join(dir, 'lock.db')}`;
    const first = connect(path);
    const second = connect(path);
    try {
      await migrateToLatest(first);
      second.sqlite?.pragma('busy_timeout = 0');
      await writeTransaction(first, async (trx) => {
        await trx.selectFrom('users').select('id').execute();
        // A deferred BEGIN would hold no lock after a read: another writer could slip in
        // between this read and the write that depends on it.
        assert.throws(() => second.sqlite?.exec('BEGIN IMMEDIATE'), /locked|busy/i);
      });
      second.sqlite?.exec('BEGIN IMMEDIATE');
      second.sqlite?.exec('ROLLBACK');
    } finally {
      await second.close();
      await first.close();
    }
  });

  it('rolls back a write transaction that throws', async () => {
    const db = connect(`sqlite:${join(dir, 'rollback.db')}`);
    try {
      await migrateToLatest(db);
      await assert.rejects(
        writeTransaction(db, async (trx) => {
          await trx.insertInto('settings').values({ key: 'doomed', value: '1', is_public: 0, updated_at: new Date().toISOString() }).execute();
          throw new Error('abort');
        }),
        /abort/,
      );
      assert.equal(await db.kysely.selectFrom('settings').select('key').where('key', '=', 'doomed').executeTakeFirst(), undefined);
    } finally {
      await db.close();
    }
  });
});

describe('constraints (on the test database)', () => {
  let database: TestDatabase;
  before(async () => {
    database = await createTestDatabase();
  });
  after(() => database.drop());

  const now = () => new Date().toISOString();
  const insertUser = (email: string) =>
    database.db.kysely
      .insertInto('users')
      .values({ name: 'N', email, password: 'x', email_verified_at: null, is_admin: 0, remember_token: null, locale: null, created_at: now(), updated_at: now() })
      .returning('id')
      .executeTakeFirstOrThrow();
  const insertToken = (userId: number, digest: string) =>
    database.db.kysely
      .insertInto('personal_access_tokens')
      .values({ user_id: userId, name: 'd', token: digest, abilities: '["*"]', last_used_at: null, expires_at: null, created_at: now(), updated_at: now() })
      .execute();

  it('refuses a second user whose email differs only in case', async () => {
    await insertUser('Case@Example.com');
    await assert.rejects(insertUser('case@example.COM'), (error: unknown) => isUniqueViolation(error));
  });

  it('refuses two tokens with the same digest', async () => {
    const user = await insertUser('digest@example.com');
    await insertToken(user.id, 'a'.repeat(64));
    await assert.rejects(insertToken(user.id, 'a'.repeat(64)), (error: unknown) => isUniqueViolation(error));
  });

  it('refuses two posts with the same slug in one language, and takes it in another', async () => {
    const post = { author_id: null, title: 'T', slug: 'same-slug', excerpt: '', body: '', locale: 'en', status: 'draft' as const, published_at: null, created_at: now(), updated_at: now() };
    await database.db.kysely.insertInto('posts').values(post).execute();
    await assert.rejects(database.db.kysely.insertInto('posts').values(post).execute(), (error: unknown) => isUniqueViolation(error));
    await database.db.kysely.insertInto('posts').values({ ...post, locale: 'fr' }).execute();
  });

  it("deletes a user's tokens with the user, and keeps their posts without an author", async () => {
    const user = await insertUser('leaving@example.com');
    await insertToken(user.id, 'b'.repeat(64));
    await database.db.kysely
      .insertInto('posts')
      .values({ author_id: user.id, title: 'Kept', slug: 'kept-post', excerpt: '', body: '', locale: 'en', status: 'draft', published_at: null, created_at: now(), updated_at: now() })
      .execute();
    await database.db.kysely.deleteFrom('users').where('id', '=', user.id).execute();
    const tokens = await database.db.kysely.selectFrom('personal_access_tokens').select('id').where('user_id', '=', user.id).execute();
    assert.deepEqual(tokens, []);
    const post = await database.db.kysely.selectFrom('posts').select('author_id').where('slug', '=', 'kept-post').executeTakeFirstOrThrow();
    assert.equal(post.author_id, null);
  });

  it('reads timestamps back as ISO-8601 UTC strings and ids as numbers', async () => {
    const user = await insertUser('types@example.com');
    const row = await database.db.kysely.selectFrom('users').select(['id', 'created_at', 'is_admin']).where('id', '=', user.id).executeTakeFirstOrThrow();
    assert.equal(typeof row.id, 'number');
    assert.equal(typeof row.is_admin, 'number');
    assert.match(row.created_at, /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/);
  });
});

describe('a migration meeting a schema dropped by another process', () => {
  const failing = (code: string, times: number) => {
    let calls = 0;
    const step = async () => {
      calls += 1;
      if (calls <= times) throw Object.assign(new Error(`catalog ${code}`), { code });
      return 'applied';
    };
    return { step, calls: () => calls };
  };

  it('is tried again while the catalog listing fails (3F000, 42P01, …), up to five times', async () => {
    const race = failing('3F000', 4);
    assert.equal(await retryingCatalogRace(race.step), 'applied');
    assert.equal(race.calls(), 5);
    const lost = failing('42P01', 5);
    await assert.rejects(retryingCatalogRace(lost.step), /catalog 42P01/);
    assert.equal(lost.calls(), 5);
  });

  it('is not tried again on any other failure', async () => {
    const other = failing('23505', 1);
    await assert.rejects(retryingCatalogRace(other.step), /catalog 23505/);
    assert.equal(other.calls(), 1);
  });
});
