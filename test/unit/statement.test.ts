// statement(): a read written with Kysely, built once per database, run with named arguments
// (db/connect.ts), on the test database (SQLite, or PostgreSQL with TEST_DATABASE_URL).
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { statement, type Arg } from '../../src/db/connect.js';
import { createTestDatabase, type TestDatabase } from '../helpers.js';

describe('statement()', () => {
  let database: TestDatabase;
  let other: TestDatabase;
  const now = new Date().toISOString();
  const people = [
    { name: 'Ada', email: 'ada@statement.test', is_admin: 1 },
    { name: 'Ada', email: 'ada.two@statement.test', is_admin: 0 },
    { name: 'Grace', email: 'grace@statement.test', is_admin: 0 },
  ];
  const seed = (on: TestDatabase) =>
    on.db.kysely
      .insertInto('users')
      .values(people.map((person) => ({ ...person, password: null, email_verified_at: null, created_at: now, updated_at: now })))
      .execute();

  before(async () => {
    database = await createTestDatabase();
    other = await createTestDatabase();
    await seed(database);
    await seed(other);
  });
  after(async () => {
    await database.drop();
    await other.drop();
  });

  let builds = 0;
  // Two arguments of one type, given in the other order than the SQL has them, and a constant.
  const byNameNotEmail = statement('statement_test_users', (kysely, arg: Arg<{ email: string; name: string }>) => {
    builds += 1;
    return kysely.selectFrom('users').select(['email']).where('name', '=', arg('name')).where('email', '!=', arg('email')).where('is_admin', '=', 0).orderBy('email');
  });

  it('puts each named argument where the statement placed it, and keeps the constants', async () => {
    const rows = await byNameNotEmail.all(database.db, { email: 'nobody@statement.test', name: 'Ada' });
    assert.deepEqual(rows, [{ email: 'ada.two@statement.test' }], 'the administrator is left out by the constant');
    assert.deepEqual(await byNameNotEmail.all(database.db, { email: 'ada.two@statement.test', name: 'Ada' }), []);
    assert.deepEqual(await byNameNotEmail.first(database.db, { email: 'x', name: 'Grace' }), { email: 'grace@statement.test' });
    assert.equal(await byNameNotEmail.first(database.db, { email: 'x', name: 'Nobody' }), undefined);
  });

  it('is built once for each database, and runs on the database it is given', async () => {
    const before = builds;
    await byNameNotEmail.all(database.db, { email: 'x', name: 'Ada' });
    await byNameNotEmail.all(database.db, { email: 'y', name: 'Grace' });
    assert.equal(builds, before, 'already built for this database');
    await other.db.kysely.updateTable('users').set({ name: 'Elsewhere' }).where('email', '=', 'grace@statement.test').execute();
    assert.deepEqual(await byNameNotEmail.all(other.db, { email: 'x', name: 'Elsewhere' }), [{ email: 'grace@statement.test' }]);
    assert.deepEqual(await byNameNotEmail.all(database.db, { email: 'x', name: 'Elsewhere' }), []);
    assert.equal(builds, before + 1, 'built once more, for the other database');
  });
});
