// Migration 2026_11_27_000001: the identities table, and users.password nullable. Run on a
// database holding accounts and everything that points at them (SQLite rebuilds users with its
// foreign keys off, PostgreSQL drops the NOT NULL): every user and id survives, the AUTOINCREMENT
// counter too, the eight tables that reference users keep their cascades, the email index still
// refuses a second spelling, and `down` is refused while an account has no password.
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { Migrator, sql } from 'kysely';
import pg from 'pg';
import { connect, type Db } from '../../src/db/connect.js';
import { isUniqueViolation } from '../../src/db/errors.js';
import { migrations } from '../../src/db/migrator.js';
import { TEST_DATABASE_URL, migrateTo as migrateToName, onPostgres } from '../helpers.js';

const BEFORE = '2026_11_26_000001_posts_slug_unique_per_locale';
const THIS = '2026_11_27_000001_create_identities';

async function admin(statement: string): Promise<void> {
  const client = new pg.Client({ connectionString: TEST_DATABASE_URL });
  await client.connect();
  try {
    await client.query(statement);
  } finally {
    await client.end();
  }
}

describe('migration: identities, and accounts without a password', () => {
  const schema = onPostgres ? `t_${randomBytes(6).toString('hex')}` : undefined;
  let db: Db;
  let migrator: Migrator;
  let keptId: number;
  let goneId: number;
  const now = () => new Date().toISOString();
  const migrateTo = (name: string) => migrateToName(migrator, name);
  const addUser = async (email: string, password: string | null) =>
    (
      await db.kysely
        .insertInto('users')
        .values({ name: email, email, password, email_verified_at: null, is_admin: 0, created_at: now(), updated_at: now() })
        .returning('id')
        .executeTakeFirstOrThrow()
    ).id;
  const allUsers = () => db.kysely.selectFrom('users').selectAll().orderBy('id').execute();
  const count = async (table: 'personal_access_tokens' | 'sessions' | 'passkeys' | 'remember_tokens' | 'known_devices' | 'email_changes' | 'identities') =>
    Number((await db.kysely.selectFrom(table).select((eb) => eb.fn.countAll().as('n')).executeTakeFirstOrThrow()).n);

  before(async () => {
    if (schema !== undefined) await admin(`create schema ${schema}`);
    db = onPostgres ? connect(TEST_DATABASE_URL, { schema, poolSize: 2 }) : connect('sqlite::memory:');
    migrator = new Migrator({ db: db.kysely, provider: { getMigrations: async () => migrations }, migrationTableSchema: schema });
    await migrateTo(BEFORE);
    keptId = await addUser('Kept@Example.com', '$argon2id$kept');
    // The newest account is deleted, so the highest id ever given is above the highest left.
    goneId = await addUser('gone@example.com', '$argon2id$gone');
    await db.kysely.deleteFrom('users').where('id', '=', goneId).execute();
    // A row in each table that points at users.
    const at = now();
    await db.kysely.insertInto('personal_access_tokens').values({ user_id: keptId, name: 't', token: 'h'.repeat(64), abilities: '["*"]', last_used_at: null, expires_at: null, created_at: at, updated_at: at }).execute();
    await db.kysely.insertInto('sessions').values({ id: 's1', user_id: keptId, admin_user_id: keptId, payload: '{}', expires_at: at, updated_at: at, created_at: at, ip: null, user_agent: null }).execute();
    await db.kysely.insertInto('passkeys').values({ user_id: keptId, name: 'key', credential_id: 'cred', public_key: 'pk', last_used_at: null, created_at: at }).execute();
    await db.kysely.insertInto('remember_tokens').values({ user_id: keptId, selector: 'sel', validator_hash: 'v', expires_at: at, last_used_at: null, created_at: at }).execute();
    await db.kysely.insertInto('known_devices').values({ user_id: keptId, fingerprint: 'f', created_at: at, last_seen_at: at }).execute();
    await db.kysely.insertInto('email_changes').values({ user_id: keptId, new_email: 'n@example.com', token_hash: 'a', cancel_token_hash: 'b', expires_at: at, created_at: at }).execute();
    await db.kysely.insertInto('audit_logs').values({ user_id: keptId, actor_name: 'k', actor_email: 'k', action: 'x', subject_type: 'user', subject_id: null, subject_label: 'k', details: '{}', ip: null, created_at: at }).execute();
    await db.kysely.insertInto('posts').values({ author_id: keptId, title: 'T', slug: 't', excerpt: '', body: '', locale: 'en', status: 'draft', published_at: null, created_at: at, updated_at: at }).execute();
  });
  after(async () => {
    await db.close();
    if (schema !== undefined) await admin(`drop schema ${schema} cascade`);
  });

  it('refuses an account without a password before it (the old rule)', async () => {
    await assert.rejects(addUser('nopass@example.com', null));
  });

  it('keeps every user, id and reference, and the database whole', async () => {
    const users = await allUsers();
    await migrateTo(THIS);
    assert.deepEqual(await allUsers(), users);
    for (const table of ['personal_access_tokens', 'sessions', 'passkeys', 'remember_tokens', 'known_devices', 'email_changes'] as const) assert.equal(await count(table), 1, table);
    if (!onPostgres) {
      assert.equal(db.sqlite?.pragma('foreign_keys', { simple: true }), 1, 'foreign keys are on again');
      assert.deepEqual(db.sqlite?.pragma('integrity_check'), [{ integrity_check: 'ok' }]);
      assert.deepEqual(db.sqlite?.pragma('foreign_key_check'), []);
    }
  });

  it('takes an account without a password, and never gives again the id of a deleted one', async () => {
    const id = await addUser('nopass@example.com', null);
    assert.ok(id > goneId);
    assert.equal((await db.kysely.selectFrom('users').select('password').where('id', '=', id).executeTakeFirstOrThrow()).password, null);
  });

  it('still refuses an email another account has in another case', async () => {
    await assert.rejects(addUser('KEPT@example.com', 'x'), (error: unknown) => isUniqueViolation(error));
  });

  it('refuses a subject twice at one provider, and a link to no account', async () => {
    const at = now();
    await db.kysely.insertInto('identities').values({ user_id: keptId, provider: 'corp', subject: 'abc', email: null, created_at: at, last_used_at: null }).execute();
    await db.kysely.insertInto('identities').values({ user_id: keptId, provider: 'google', subject: 'abc', email: null, created_at: at, last_used_at: null }).execute();
    await assert.rejects(
      db.kysely.insertInto('identities').values({ user_id: keptId, provider: 'corp', subject: 'abc', email: null, created_at: at, last_used_at: null }).execute(),
      (error: unknown) => isUniqueViolation(error),
    );
    await assert.rejects(db.kysely.insertInto('identities').values({ user_id: 999_999, provider: 'corp', subject: 'x', email: null, created_at: at, last_used_at: null }).execute());
  });

  it('keeps moving data_version when a user changes (PostgreSQL)', { skip: onPostgres ? false : 'data_version is PostgreSQL only' }, async () => {
    const version = async () => Number((await sql<{ n: string }>`select n from data_version where id = 1`.execute(db.kysely)).rows[0]?.n);
    const start = await version();
    await db.kysely.updateTable('users').set({ name: 'Renamed' }).where('id', '=', keptId).execute();
    assert.ok((await version()) > start);
  });

  it('goes down only once every account has a password, then requires one again', async () => {
    await assert.rejects(migrateTo(BEFORE), /cannot be required again.*nopass@example\.com/);
    assert.ok((await migrator.getMigrations()).find((m) => m.name === THIS)?.executedAt, 'still applied');
    await db.kysely.deleteFrom('users').where('email', '=', 'nopass@example.com').execute();
    const users = await allUsers();
    await migrateTo(BEFORE);
    assert.deepEqual(await allUsers(), users);
    await assert.rejects(addUser('again@example.com', null));
    await migrateTo(THIS);
  });

  it('cascades a deleted user to every table that points at it, identities included', async () => {
    await db.kysely.insertInto('identities').values({ user_id: keptId, provider: 'corp', subject: 'def', email: null, created_at: now(), last_used_at: null }).execute();
    await db.kysely.deleteFrom('users').where('id', '=', keptId).execute();
    for (const table of ['personal_access_tokens', 'sessions', 'passkeys', 'remember_tokens', 'known_devices', 'email_changes', 'identities'] as const) assert.equal(await count(table), 0, table);
    const post = await db.kysely.selectFrom('posts').select('author_id').executeTakeFirstOrThrow();
    assert.equal(post.author_id, null);
    const audit = await db.kysely.selectFrom('audit_logs').select('user_id').executeTakeFirstOrThrow();
    assert.equal(audit.user_id, null);
  });
});
