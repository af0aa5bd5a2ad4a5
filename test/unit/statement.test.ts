// statement(): a read written with Kysely, built once per database, run with named arguments,
// and statementFamily(), one such statement per shape of its input (db/connect.ts), on the test database (SQLite, or PostgreSQL with TEST_DATABASE_URL).
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { statement, statementFamily, type Arg } from '../../src/db/connect.js';
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

describe('statementFamily()', () => {
  let database: TestDatabase;
  const now = new Date().toISOString();
  before(async () => {
    database = await createTestDatabase();
    await database.db.kysely
      .insertInto('users')
      .values(['Ada', 'Brian', 'Grace', 'Linus'].map((name, at) => ({ name, email: `${name.toLowerCase()}@family.test`, password: null, is_admin: at % 2, email_verified_at: null, created_at: now, updated_at: now })))
      .execute();
  });
  after(() => database.drop());

  type Shape = { admins: boolean; dir: 'asc' | 'desc'; search: boolean };
  const built: string[] = [];
  const people = statementFamily(
    'family_test_users',
    (kysely, arg: Arg<{ pattern: string; limit: number }>, shape: Shape) => {
      built.push(`${shape.admins}/${shape.dir}/${shape.search}`);
      let query = kysely.selectFrom('users').select('name');
      if (shape.admins) query = query.where('is_admin', '=', 1);
      if (shape.search) query = query.where('name', 'like', arg('pattern'));
      return query.orderBy('name', shape.dir).limit(arg('limit'));
    },
    { pooled: (shape) => shape.search },
  );
  const names = async (shape: Shape, args: { pattern: string; limit: number }) => (await people.all(database.db, shape, args)).map((row) => row.name);

  it('builds each shape once, and answers each shape with its own SQL and the values given', async () => {
    assert.deepEqual(await names({ admins: false, dir: 'asc', search: false }, { pattern: '', limit: 10 }), ['Ada', 'Brian', 'Grace', 'Linus']);
    assert.deepEqual(await names({ admins: false, dir: 'desc', search: false }, { pattern: '', limit: 2 }), ['Linus', 'Grace']);
    assert.deepEqual(await names({ admins: true, dir: 'asc', search: false }, { pattern: '', limit: 10 }), ['Brian', 'Linus']);
    assert.deepEqual(await names({ admins: false, dir: 'asc', search: true }, { pattern: '%a%', limit: 10 }), ['Ada', 'Brian', 'Grace']);
    assert.equal(built.length, 4);
    assert.deepEqual(await names({ admins: false, dir: 'asc', search: true }, { pattern: 'L%', limit: 10 }), ['Linus']);
    assert.deepEqual(await names({ admins: false, dir: 'desc', search: false }, { pattern: '', limit: 1 }), ['Linus']);
    assert.equal(built.length, 4, 'no shape built twice');
  });

  it('answers past its last kept shape, building the statement for the one run', async () => {
    const many = statementFamily('family_test_many', (kysely, arg: Arg<{ limit: number }>, shape: { name: string }) => kysely.selectFrom('users').select('email').where('name', '=', shape.name).limit(arg('limit')));
    for (let i = 0; i < 300; i += 1) assert.deepEqual(await many.all(database.db, { name: `nobody ${i}` }, { limit: 1 }), []);
    assert.deepEqual(await many.all(database.db, { name: 'Grace' }, { limit: 1 }), [{ email: 'grace@family.test' }]);
  });

  it('on PostgreSQL runs a pooled shape on the pool and the others on the pipelined connection', async (t) => {
    const { reads, pool } = database.db;
    if (reads === null || pool === null) return t.skip('PostgreSQL only (TEST_DATABASE_URL)');
    const seen: string[] = [];
    const spy = <Target extends { query: (...args: never[]) => unknown }>(target: Target, label: string) => {
      const original = target.query;
      target.query = ((...args: never[]) => {
        seen.push(label);
        return original.apply(target, args);
      }) as Target['query'];
      return () => {
        target.query = original;
      };
    };
    const undo = [spy(reads, 'pipelined'), spy(pool, 'pool')];
    try {
      await names({ admins: true, dir: 'desc', search: false }, { pattern: '', limit: 10 });
      await names({ admins: true, dir: 'desc', search: true }, { pattern: '%', limit: 10 });
    } finally {
      for (const restore of undo) restore();
    }
    assert.deepEqual(seen, ['pipelined', 'pool']);
  });
});
