// The account commands (user:create, admin:create, admin:promote, admin:demote) leave one line in
// the panel's audit log naming the command line and the OS user as the actor, the subject user,
// and no secret; a refused command leaves none. Run as a user runs them (see harness.ts); the
// panel's audit page then reads the lines as sentences.
import assert from 'node:assert/strict';
import { userInfo } from 'node:os';
import { after, before, describe, test } from 'node:test';
import { signedInAdmin } from '../admin/support.js';
import { buildTestApp, type TestApp } from '../helpers.js';
import { createCliHarness, runInProcess, type CliHarness } from './harness.js';
import { characters } from '../support/client.js';

const PASSWORD = 'correct horse battery';

describe('audit lines of the account commands', () => {
  let h: CliHarness;
  before(async () => (h = await createCliHarness()));
  after(() => h.close());

  const lines = () => h.db.kysely.selectFrom('audit_logs').selectAll().orderBy('id').execute();

  /** Runs one command that must succeed, and returns the audit lines it added. */
  const newLines = async (args: string[]) => {
    const before = (await lines()).length;
    const result = await h.cli(args);
    assert.equal(result.code, 0, result.stderr);
    return (await lines()).slice(before);
  };

  const assertCommandLineLine = async (added: Awaited<ReturnType<typeof lines>>, action: string, email: string) => {
    assert.equal(added.length, 1, `exactly one line: ${JSON.stringify(added)}`);
    const line = added[0]!;
    const user = await h.services.users.findByEmail(email);
    assert.ok(user);
    assert.equal(line.user_id, null);
    assert.equal(line.actor_name, 'command line');
    assert.equal(line.actor_email, userInfo().username);
    assert.equal(line.action, action);
    assert.deepEqual([line.subject_type, line.subject_id, line.subject_label], ['user', String(user.id), email]);
    assert.equal(line.details, '{}');
    assert.doesNotMatch(JSON.stringify(line), new RegExp(PASSWORD));
  };

  test('user:create writes one "user.created" line for the new user, without the password', async () => {
    await assertCommandLineLine(await newLines(['user:create', '--name', 'Ada', '--email', 'ada@example.com', '--password', PASSWORD]), 'user.created', 'ada@example.com');
  });

  test('admin:create writes one "admin.created" line for the new administrator, without the password', async () => {
    await assertCommandLineLine(await newLines(['admin:create', '--name', 'Root', '--email', 'root@example.com', '--password', PASSWORD]), 'admin.created', 'root@example.com');
  });

  test('admin:promote writes one "admin.promoted" line, admin:demote one "admin.demoted" line', async () => {
    await assertCommandLineLine(await newLines(['admin:promote', 'ADA@example.com']), 'admin.promoted', 'ada@example.com');
    await assertCommandLineLine(await newLines(['admin:demote', 'ada@example.com']), 'admin.demoted', 'ada@example.com');
  });

  test('promoting an administrator or demoting a user changes nothing and writes no line', async () => {
    assert.deepEqual(await newLines(['admin:promote', 'root@example.com']), []);
    assert.deepEqual(await newLines(['admin:demote', 'ada@example.com']), []);
  });

  const failures: { name: string; args: string[] }[] = [
    { name: 'user:create with a taken email', args: ['user:create', '--name', 'X', '--email', 'ADA@example.com', '--password', PASSWORD] },
    { name: 'user:create with a short password', args: ['user:create', '--name', 'X', '--email', 'x@example.com', '--password', 'short'] },
    { name: 'user:create without --password', args: ['user:create', '--name', 'X', '--email', 'x@example.com'] },
    { name: 'admin:create with a taken email', args: ['admin:create', '--name', 'X', '--email', 'root@example.com', '--password', PASSWORD] },
    { name: 'admin:create with a malformed email', args: ['admin:create', '--name', 'X', '--email', 'nope', '--password', PASSWORD] },
    { name: 'admin:promote of an unknown email', args: ['admin:promote', 'ghost@example.com'] },
    { name: 'admin:demote of an unknown email', args: ['admin:demote', 'ghost@example.com'] },
    { name: 'admin:promote without an email', args: ['admin:promote'] },
  ];
  for (const failure of failures) {
    test(`${failure.name} fails and writes no line`, async () => {
      const before = (await lines()).length;
      const result = await h.cli(failure.args);
      assert.notEqual(result.code, 0);
      assert.equal((await lines()).length, before);
    });
  }
});

describe("the panel's audit page", () => {
  let t: TestApp;
  before(async () => (t = await buildTestApp()));
  after(() => t.close());

  test('shows the command-line lines with the OS user, in English and French', async () => {
    const cli = async (args: string[]) => {
      const result = await runInProcess(args, { db: t.db, config: t.config });
      assert.equal(result.code, 0, result.stderr);
    };
    await cli(['user:create', '--name', 'Plain', '--email', 'plain@example.com', '--password', PASSWORD]);
    await cli(['admin:promote', 'plain@example.com']);
    await cli(['admin:demote', 'plain@example.com']);
    const { client } = await signedInAdmin(t, { email: 'keeper@example.com' });
    const osUser = userInfo().username;
    const response = await client.get('/admin/audit');
    assert.equal(response.statusCode, 200);
    const actor = `<strong>command line</strong> <span class="muted">(${osUser})</span>`;
    for (const sentence of [
      'created the user plain@example.com',
      'made plain@example.com an administrator',
      'took administrator rights away from plain@example.com',
      'created the administrator keeper@example.com',
    ]) {
      assert.ok(response.body.includes(`${actor}\n        ${sentence}`), `"${sentence}" by the command line in ${response.body}`);
    }
    const french = await client.get('/admin/audit', { 'accept-language': 'fr' });
    assert.match(french.body, /a fait de plain@example\.com un administrateur/);
    assert.match(characters(french.body), /a retiré les droits d’administrateur à plain@example\.com/);
    assert.match(characters(french.body), /a créé l’administrateur keeper@example\.com/);
  });
});
