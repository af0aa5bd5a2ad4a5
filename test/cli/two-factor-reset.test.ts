// user:2fa-reset --email: turns a user's two-factor sign-in off, with an audit line naming the
// command line (and the OS user) as the actor; run as a user runs it (see harness.ts).
import assert from 'node:assert/strict';
import { userInfo } from 'node:os';
import { after, before, describe, test } from 'node:test';
import { generate } from 'otplib';
import { twoFactorEnabled } from '../../src/modules/two-factor/two-factor.service.js';
import { createCliHarness, spawnCli, type CliHarness, type CliResult } from './harness.js';

const PASSWORD = 'correct horse battery';

function assertOneLineError(result: CliResult, code: number, message: RegExp): void {
  assert.equal(result.code, code, `exit code (stderr: ${result.stderr})`);
  assert.equal(result.stdout, '');
  assert.match(result.stderr, message);
  assert.equal(result.stderr.trimEnd().split('\n').length, 1, `one line: ${result.stderr}`);
}

describe('user:2fa-reset', () => {
  let h: CliHarness;
  before(async () => (h = await createCliHarness()));
  after(() => h.close());

  const user = (email: string) => h.services.users.findByEmail(email).then((found) => found!);
  const auditLines = () => h.db.kysely.selectFrom('audit_logs').selectAll().where('action', '=', 'user.two_factor_reset').orderBy('id').execute();

  /** A user with two-factor sign-in on, through the service as the security page does it. */
  const withTwoFactor = async (email: string) => {
    await h.services.users.create({ name: 'Lost Phone', email, password: PASSWORD });
    const setup = await h.services.twoFactor.begin(await user(email));
    const codes = await h.services.twoFactor.confirm(await user(email), await generate({ secret: setup.secret }));
    assert.ok(codes !== null);
    assert.equal(twoFactorEnabled(await user(email)), true);
  };

  test('turns two-factor off, whatever the case of the email, and writes an audit line naming the command line', async () => {
    await withTwoFactor('lost@example.com');
    const result = await h.cli(['user:2fa-reset', '--email', 'LOST@example.com']);
    assert.equal(result.code, 0, result.stderr);
    assert.equal(result.stdout, 'Two-factor sign-in is now off for lost@example.com.\n');
    const after = await user('lost@example.com');
    assert.equal(twoFactorEnabled(after), false);
    assert.deepEqual([after.two_factor_secret, after.two_factor_recovery_codes], [null, null]);
    const lines = await auditLines();
    assert.equal(lines.length, 1);
    const line = lines[0]!;
    assert.equal(line.user_id, null);
    assert.equal(line.actor_name, 'command line');
    assert.equal(line.actor_email, userInfo().username);
    assert.deepEqual([line.subject_type, line.subject_id, line.subject_label], ['user', String(after.id), 'lost@example.com']);
    // The panel's audit page reads it as a sentence.
    const [entry] = await h.services.audit.latest(1);
    assert.equal(entry?.action, 'user.two_factor_reset');
  });

  test('changes nothing and writes no line for a user without two-factor', async () => {
    await h.services.users.create({ name: 'Plain', email: 'plain@example.com', password: PASSWORD });
    const before = (await auditLines()).length;
    const result = await h.cli(['user:2fa-reset', '--email', 'plain@example.com']);
    assert.equal(result.code, 0, result.stderr);
    assert.equal(result.stdout, 'plain@example.com does not use two-factor sign-in; nothing changed.\n');
    assert.equal((await auditLines()).length, before);
  });

  test('refuses an unknown email with exit 1', async () => {
    assertOneLineError(await h.cli(['user:2fa-reset', '--email', 'ghost@example.com']), 1, /^No user has the email ghost@example\.com\.$/m);
  });

  test('without --email is a usage error (exit 2)', async () => {
    assertOneLineError(await h.cli(['user:2fa-reset']), 2, /^Missing --email\. Run "npm run cli -- user:2fa-reset --help"\.$/m);
  });

  test('--help shows its usage and option, and the command list names it', async () => {
    const help = await spawnCli(['user:2fa-reset', '--help'], { cwd: h.dir });
    assert.equal(help.code, 0);
    assert.match(help.stdout, /^Usage: npm run cli -- user:2fa-reset --email EMAIL$/m);
    assert.match(help.stdout, /--email EMAIL +Email of the account/);
    const list = await spawnCli(['--help'], { cwd: h.dir });
    assert.match(list.stdout, /user:2fa-reset +Turn off a user's two-factor sign-in/);
  });
});
