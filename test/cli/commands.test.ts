// The CLI commands that touch the database, each run as a user runs it (see harness.ts): on
// SQLite as a real process, on PostgreSQL through run() on a fresh schema.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { sql } from 'kysely';
import { DEMO_PASSWORD } from '../../src/cli/seed.js';
import { createCliHarness, type CliHarness, type CliResult } from './harness.js';

const PASSWORD = 'correct horse battery';

/** A failure is one line on stderr, nothing on stdout, and never a stack trace. */
function assertOneLineError(result: CliResult, code: number, message: RegExp): void {
  assert.equal(result.code, code, `exit code (stderr: ${result.stderr})`);
  assert.equal(result.stdout, '');
  assert.match(result.stderr, message);
  assert.equal(result.stderr.trimEnd().split('\n').length, 1, `one line: ${result.stderr}`);
  assert.doesNotMatch(result.stderr, /\n\s+at /);
}

async function countUsers(h: CliHarness): Promise<number> {
  const row = await h.db.kysely.selectFrom('users').select((eb) => eb.fn.countAll<number | string>().as('n')).executeTakeFirstOrThrow();
  return Number(row.n);
}

describe('db:migrate', () => {
  let h: CliHarness;
  before(async () => (h = await createCliHarness({ migrated: false })));
  after(() => h.close());

  test('creates the tables on an empty database, then has nothing left to do', async () => {
    const first = await h.cli(['db:migrate']);
    assert.equal(first.code, 0, first.stderr);
    assert.match(first.stdout, /Migrated: 2026_11_21_000001_create_core_tables/);
    assert.equal(await countUsers(h), 0);
    const second = await h.cli(['db:migrate']);
    assert.equal(second.code, 0, second.stderr);
    assert.equal(second.stdout, 'Nothing to migrate.\n');
  });
});

describe('commands on a database without tables', () => {
  let h: CliHarness;
  before(async () => (h = await createCliHarness({ migrated: false })));
  after(() => h.close());

  test('tell the user to run db:migrate instead of failing with a stack trace', async () => {
    assertOneLineError(await h.cli(['admin:promote', 'someone@example.com']), 1, /no tables yet: run "npm run cli -- db:migrate" first/);
  });
});

describe('db:seed', () => {
  let h: CliHarness;
  before(async () => (h = await createCliHarness()));
  after(() => h.close());

  test('creates demo users with one administrator, 40+ posts in en and fr in every status, and a private setting', async () => {
    const result = await h.cli(['db:seed']);
    assert.equal(result.code, 0, result.stderr);
    assert.match(result.stdout, /Seeded 4 users, 44 posts and 3 settings\./);

    const users = await h.db.kysely.selectFrom('users').select(['email', 'is_admin', 'email_verified_at']).execute();
    assert.equal(users.length, 4);
    assert.deepEqual(users.filter((u) => Number(u.is_admin) === 1).map((u) => u.email), ['admin@example.com']);
    assert.ok(users.some((u) => u.email_verified_at === null), 'one demo user is unverified');
    assert.notEqual(await h.services.users.attempt('admin@example.com', DEMO_PASSWORD), null);

    const posts = await h.db.kysely
      .selectFrom('posts')
      .select(['locale', 'status', (eb) => eb.fn.countAll<number | string>().as('n')])
      .groupBy(['locale', 'status'])
      .execute();
    const count = (locale: string, status: string) => Number(posts.find((p) => p.locale === locale && p.status === status)?.n ?? 0);
    assert.equal(posts.reduce((sum, p) => sum + Number(p.n), 0), 44);
    for (const locale of ['en', 'fr']) {
      for (const status of ['published', 'draft', 'archived']) assert.ok(count(locale, status) > 0, `${locale} ${status}`);
    }

    const page = await h.services.posts.list({ status: 'published', locale: 'en', page: 1, perPage: 100 });
    assert.equal(page.total, 17, 'the scheduled post is not listed yet');
    const publicSettings = await h.services.settings.publicSettings();
    assert.equal(publicSettings.site_name, 'Tessera');
    const all = await h.services.settings.all();
    assert.ok(all.some((s) => s.key === 'contact_email' && !s.is_public));
    assert.equal('contact_email' in publicSettings, false);
  });

  test('running it again creates nothing twice', async () => {
    const result = await h.cli(['db:seed']);
    assert.equal(result.code, 0, result.stderr);
    assert.match(result.stdout, /Seeded 0 users, 0 posts and 0 settings\./);
    assert.equal(await countUsers(h), 4);
  });

  test('refuses to run in production unless forced', async () => {
    assertOneLineError(await h.cli(['db:seed'], { NODE_ENV: 'production' }), 1, /refuses to run in production.*--force/);
    const forced = await h.cli(['db:seed', '--force'], { NODE_ENV: 'production' });
    assert.equal(forced.code, 0, forced.stderr);
  });
});

describe('user:create', () => {
  let h: CliHarness;
  before(async () => (h = await createCliHarness()));
  after(() => h.close());

  test('creates an unverified non-admin user whose password works', async () => {
    const result = await h.cli(['user:create', '--name', 'Grace Hopper', '--email', 'grace@example.com', '--password', PASSWORD]);
    assert.equal(result.code, 0, result.stderr);
    assert.match(result.stdout, /^Created user #\d+ Grace Hopper <grace@example.com> \(email not verified\)\.\n$/);
    assert.doesNotMatch(result.stdout + result.stderr, new RegExp(PASSWORD));
    const user = await h.services.users.attempt('grace@example.com', PASSWORD);
    assert.ok(user);
    assert.equal(Number(user.is_admin), 0);
    assert.equal(user.email_verified_at, null);
  });

  test('--verified marks the email as verified', async () => {
    const result = await h.cli(['user:create', '--name', 'Verified', '--email', 'verified@example.com', '--password', PASSWORD, '--verified']);
    assert.equal(result.code, 0, result.stderr);
    const user = await h.services.users.findByEmail('verified@example.com');
    assert.notEqual(user?.email_verified_at ?? null, null);
  });

  const failures: { name: string; args: string[]; code: number; message: RegExp }[] = [
    { name: 'a malformed email', args: ['--name', 'X', '--email', 'not-an-email', '--password', PASSWORD], code: 1, message: /^The email field must be a valid email address\.$/m },
    { name: 'a password under 8 characters', args: ['--name', 'X', '--email', 'x1@example.com', '--password', 'short'], code: 1, message: /^The password field must be at least 8 characters\.$/m },
    { name: 'one of the most common passwords', args: ['--name', 'X', '--email', 'x4@example.com', '--password', 'qwertyuiop'], code: 1, message: /^The password is too common; choose a less guessable one\.$/m },
    { name: 'an empty name', args: ['--name', '', '--email', 'x2@example.com', '--password', PASSWORD], code: 1, message: /^The name field is required\.$/m },
    { name: 'an email taken in another case', args: ['--name', 'X', '--email', 'GRACE@example.com', '--password', PASSWORD], code: 1, message: /^The email has already been taken\.$/m },
    { name: 'a missing --password', args: ['--name', 'X', '--email', 'x3@example.com'], code: 2, message: /^Missing --password\. Run "npm run cli -- user:create --help"\.$/m },
    { name: 'an option without its value', args: ['--name'], code: 2, message: /Option --name of user:create needs a value/ },
  ];
  for (const failure of failures) {
    test(`refuses ${failure.name} with one line and exit ${failure.code}, creating nobody`, async () => {
      const before = await countUsers(h);
      assertOneLineError(await h.cli(['user:create', ...failure.args]), failure.code, failure.message);
      assert.equal(await countUsers(h), before);
    });
  }
});

describe('admin:create with options', () => {
  let h: CliHarness;
  before(async () => (h = await createCliHarness()));
  after(() => h.close());

  test('creates a verified administrator', async () => {
    const result = await h.cli(['admin:create', '--name', 'Root', '--email', 'root@example.com', '--password', PASSWORD]);
    assert.equal(result.code, 0, result.stderr);
    assert.match(result.stdout, /^Created administrator #\d+ Root <root@example.com>\.\n$/);
    const user = await h.services.users.attempt('root@example.com', PASSWORD);
    assert.equal(Number(user?.is_admin), 1);
    assert.notEqual(user?.email_verified_at ?? null, null);
  });

  test('refuses an existing email and points to admin:promote', async () => {
    assertOneLineError(
      await h.cli(['admin:create', '--name', 'Again', '--email', 'root@example.com', '--password', PASSWORD]),
      1,
      /already been taken\. To make that user an administrator: npm run cli -- admin:promote root@example\.com/,
    );
  });

  test('refuses a short password', async () => {
    assertOneLineError(await h.cli(['admin:create', '--name', 'A', '--email', 'a@example.com', '--password', '1234567']), 1, /at least 8 characters/);
    assert.equal(await h.services.users.findByEmail('a@example.com'), undefined);
  });

  test('fails with one line when something is missing and stdin is not a terminal', async () => {
    assertOneLineError(
      await h.cli(['admin:create', '--email', 'b@example.com']),
      2,
      /^Missing --name, --password \(stdin is not a terminal, so they cannot be asked for\)\./,
    );
    assert.equal(await h.services.users.findByEmail('b@example.com'), undefined);
  });
});

describe('admin:promote and admin:demote', () => {
  let h: CliHarness;
  before(async () => {
    h = await createCliHarness();
    await h.services.users.create({ name: 'Plain', email: 'plain@example.com', password: PASSWORD });
  });
  after(() => h.close());

  const isAdmin = async () => Number((await h.services.users.findByEmail('plain@example.com'))?.is_admin);

  test('promote makes the user an administrator, whatever the case of the email', async () => {
    const result = await h.cli(['admin:promote', 'PLAIN@example.com']);
    assert.equal(result.code, 0, result.stderr);
    assert.equal(result.stdout, 'plain@example.com is now an administrator.\n');
    assert.equal(await isAdmin(), 1);
  });

  test('promoting an administrator again changes nothing and succeeds', async () => {
    const result = await h.cli(['admin:promote', 'plain@example.com']);
    assert.equal(result.code, 0);
    assert.match(result.stdout, /already an administrator/);
    assert.equal(await isAdmin(), 1);
  });

  test('demote takes the rights away', async () => {
    const result = await h.cli(['admin:demote', 'plain@example.com']);
    assert.equal(result.code, 0, result.stderr);
    assert.equal(result.stdout, 'plain@example.com is no longer an administrator.\n');
    assert.equal(await isAdmin(), 0);
  });

  for (const command of ['admin:promote', 'admin:demote']) {
    test(`${command} refuses an unknown email with exit 1`, async () => {
      assertOneLineError(await h.cli([command, 'ghost@example.com']), 1, /^No user has the email ghost@example\.com\.$/m);
    });
    test(`${command} without an email is a usage error`, async () => {
      assertOneLineError(await h.cli([command]), 2, /needs EMAIL/);
    });
  }
});

describe('tokens:prune', () => {
  let h: CliHarness;
  before(async () => (h = await createCliHarness()));
  after(() => h.close());

  test('deletes only expired tokens, and with --hours only those expired longer ago', async () => {
    const user = await h.services.users.create({ name: 'T', email: 't@example.com', password: PASSWORD });
    const hour = 3_600_000;
    const make = async (name: string, expiresInHours: number | null) => {
      const token = await h.services.tokens.issue(user.id, name);
      const expires = expiresInHours === null ? null : new Date(Date.now() + expiresInHours * hour).toISOString();
      await h.db.kysely.updateTable('personal_access_tokens').set({ expires_at: expires }).where('id', '=', token.id).execute();
    };
    await make('never', null);
    await make('future', 5);
    await make('expired-2h', -2);
    await make('expired-30h', -30);
    const names = async () =>
      (await h.db.kysely.selectFrom('personal_access_tokens').select('name').orderBy('name').execute()).map((r) => r.name);

    const older = await h.cli(['tokens:prune', '--hours', '24']);
    assert.equal(older.code, 0, older.stderr);
    assert.equal(older.stdout, 'Deleted 1 expired token.\n');
    assert.deepEqual(await names(), ['expired-2h', 'future', 'never']);

    const all = await h.cli(['tokens:prune']);
    assert.equal(all.code, 0, all.stderr);
    assert.equal(all.stdout, 'Deleted 1 expired token.\n');
    assert.deepEqual(await names(), ['future', 'never']);
  });

  test('with SANCTUM_EXPIRATION, deletes tokens older than the lifetime', async () => {
    await h.db.kysely
      .updateTable('personal_access_tokens')
      .set({ created_at: new Date(Date.now() - 3 * 3_600_000).toISOString() })
      .where('name', '=', 'never')
      .execute();
    const result = await h.cli(['tokens:prune'], { SANCTUM_EXPIRATION: '60' });
    assert.equal(result.code, 0, result.stderr);
    const left = await h.db.kysely.selectFrom('personal_access_tokens').select('name').execute();
    assert.deepEqual(left.map((r) => r.name), ['future']);
  });

  for (const hours of ['-1', 'abc', '1.5']) {
    test(`refuses --hours ${hours} as a usage error`, async () => {
      assertOneLineError(await h.cli(['tokens:prune', `--hours=${hours}`]), 2, /--hours must be a whole number of hours/);
    });
  }
});

test('the harness really reaches the database it checks', async () => {
  // Guards against a runner that silently talks to another database than the one asserted on.
  const h = await createCliHarness();
  try {
    await sql`insert into settings (key, value, is_public, updated_at) values ('probe', '1', 0, '2020-01-01T00:00:00.000Z')`.execute(h.db.kysely);
    await h.cli(['db:seed']);
    assert.equal(await countUsers(h), 4);
  } finally {
    await h.close();
  }
});
