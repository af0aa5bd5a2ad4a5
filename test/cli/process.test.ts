// The CLI as a program: help, usage errors and exit codes, configuration errors, key:generate
// and .env, and admin:create's questions (answered through stdin, and on a real terminal).
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PassThrough } from 'node:stream';
import { after, before, describe, test } from 'node:test';
import { run } from '../../src/cli.js';
import { parseAppKey } from '../../src/config.js';
import { connect } from '../../src/db/connect.js';
import { migrateToLatest } from '../../src/db/migrator.js';
import { createServices } from '../../src/services.js';
import { TEST_APP_KEY, testConfig } from '../helpers.js';
import { CLI_NODE_ARGS, CLI_PATH, createCliHarness, runInProcess, spawnCli, type CliHarness } from './harness.js';
import { COMPILE_CACHE } from '../support/entry.js';
import { oncePerRun } from '../support/services.js';

const COMMANDS = ['db:migrate', 'db:seed', 'db:import-laravel', 'user:create', 'admin:create', 'admin:promote', 'admin:demote', 'key:generate', 'tokens:prune'];

let dir: string;
before(() => (dir = mkdtempSync(join(tmpdir(), 'tessera-cli-process-'))));
after(() => rmSync(dir, { recursive: true, force: true }));

// A database URL the configuration refuses: commands that need no database must not care.
const NO_DATABASE = { DATABASE_URL: 'mysql://nowhere' };

describe('help', { skip: oncePerRun('the help text') }, () => {
  for (const args of [['--help'], ['-h'], []]) {
    test(`"${args.join(' ')}" lists every command and exits 0`, async () => {
      const result = await spawnCli(args, { cwd: dir, env: NO_DATABASE });
      assert.equal(result.code, 0, result.stderr);
      assert.match(result.stdout, /^Usage: npm run cli -- <command> \[options\]$/m);
      for (const command of COMMANDS) assert.match(result.stdout, new RegExp(`^  ${command} +\\S`, 'm'));
      assert.equal(result.stderr, '');
    });
  }

  for (const command of COMMANDS) {
    test(`${command} --help shows its usage and options and exits 0`, async () => {
      const result = await spawnCli([command, '--help'], { cwd: dir, env: NO_DATABASE });
      assert.equal(result.code, 0, result.stderr);
      assert.match(result.stdout, new RegExp(`^Usage: npm run cli -- ${command}\\b`));
      assert.match(result.stdout, /-h, --help +Show this help/);
    });
  }

  // A topic named like a member of Object.prototype is an unknown topic, not a crash.
  for (const topic of ['constructor', 'toString', '__proto__']) {
    test(`"help ${topic}" lists every command and exits 0`, async () => {
      const result = await spawnCli(['help', topic], { cwd: dir, env: NO_DATABASE });
      assert.equal(result.code, 0, result.stderr);
      assert.match(result.stdout, /^Usage: npm run cli -- <command> \[options\]$/m);
      assert.equal(result.stderr, '');
    });
  }

  test('user:create --help names every option', async () => {
    const result = await spawnCli(['user:create', '--help'], { cwd: dir, env: NO_DATABASE });
    for (const option of ['--name NAME', '--email EMAIL', '--password PASSWORD', '--verified']) assert.ok(result.stdout.includes(option), option);
  });
});

describe('usage errors', { skip: oncePerRun('the argument parser') }, () => {
  const cases: { name: string; args: string[]; message: RegExp }[] = [
    { name: 'an unknown command', args: ['users:nuke'], message: /^Unknown command "users:nuke"\. Run "npm run cli -- --help"\.\n$/ },
    { name: 'an unknown option', args: ['key:generate', '--force'], message: /^Unknown option --force for key:generate\. Run "npm run cli -- key:generate --help"\.\n$/ },
    { name: 'an unexpected argument', args: ['db:migrate', 'now'], message: /^Unexpected argument "now" for db:migrate\./ },
    { name: 'a value given to a flag', args: ['key:generate', '--write=yes'], message: /^Option --write of key:generate takes no value\./ },
  ];
  for (const c of cases) {
    test(`${c.name} exits 2 with one line on stderr and no stack trace`, async () => {
      const result = await spawnCli(c.args, { cwd: dir, env: NO_DATABASE });
      assert.equal(result.code, 2);
      assert.equal(result.stdout, '');
      assert.match(result.stderr, c.message);
      assert.equal(result.stderr.trimEnd().split('\n').length, 1);
    });
  }

  test('an invalid configuration exits 1 naming the variable', async () => {
    const result = await spawnCli(['db:migrate'], { cwd: dir, env: NO_DATABASE });
    assert.equal(result.code, 1);
    assert.match(result.stderr, /^Configuration error: DATABASE_URL must start with sqlite: or postgres:\/\//);
    assert.equal(result.stderr.trimEnd().split('\n').length, 1);
  });
});

describe('key:generate', { skip: oncePerRun('a key written to .env') }, () => {
  test('prints a new key in the base64:<32 bytes> form, different each time, even with a broken configuration', async () => {
    const env = { ...NO_DATABASE, APP_KEY: 'not-a-key' };
    const first = await spawnCli(['key:generate'], { cwd: dir, env });
    const second = await spawnCli(['key:generate'], { cwd: dir, env });
    assert.equal(first.code, 0, first.stderr);
    assert.match(first.stdout, /^base64:[A-Za-z0-9+/]{43}=\n$/);
    assert.equal(parseAppKey(first.stdout).length, 32);
    assert.notEqual(first.stdout, second.stdout);
  });

  test('--write replaces the APP_KEY line of ./.env, keeps the other lines and prints no key', async () => {
    const cwd = mkdtempSync(join(dir, 'env-'));
    const oldKey = `base64:${Buffer.alloc(32, 1).toString('base64')}`;
    writeFileSync(join(cwd, '.env'), `APP_NAME=Demo\nAPP_KEY=${oldKey}\nPORT=4000\n`);
    const result = await spawnCli(['key:generate', '--write'], { cwd, env: NO_DATABASE });
    assert.equal(result.code, 0, result.stderr);
    assert.equal(result.stdout, `APP_KEY replaced in ${join(cwd, '.env')}.\n`);
    const lines = readFileSync(join(cwd, '.env'), 'utf8').split('\n');
    assert.equal(lines[0], 'APP_NAME=Demo');
    assert.equal(lines[2], 'PORT=4000');
    const newKey = lines[1]?.replace(/^APP_KEY=/, '') ?? '';
    assert.notEqual(newKey, oldKey);
    assert.equal(parseAppKey(newKey).length, 32);
    assert.ok(!result.stdout.includes(newKey) && !result.stdout.includes(oldKey));
  });

  test('--write replaces an "export APP_KEY=" line and creates a missing .env readable by its owner only', async () => {
    const cwd = mkdtempSync(join(dir, 'env-'));
    writeFileSync(join(cwd, '.env'), 'export APP_KEY=\nDEBUG=1');
    assert.equal((await spawnCli(['key:generate', '--write'], { cwd, env: NO_DATABASE })).code, 0);
    assert.match(readFileSync(join(cwd, '.env'), 'utf8'), /^APP_KEY=base64:\S{44}\nDEBUG=1$/);

    const empty = mkdtempSync(join(dir, 'env-'));
    const created = await spawnCli(['key:generate', '--write'], { cwd: empty, env: NO_DATABASE });
    assert.equal(created.stdout, `APP_KEY written to ${join(empty, '.env')}.\n`);
    assert.match(readFileSync(join(empty, '.env'), 'utf8'), /^APP_KEY=base64:\S{44}\n$/);
    assert.equal(statSync(join(empty, '.env')).mode & 0o777, 0o600);
  });
});

describe('admin:create questions', () => {
  let h: CliHarness;
  before(async () => (h = await createCliHarness()));
  after(() => h.close());

  /** Runs admin:create in-process as if on a terminal, with `answers` typed ahead. */
  const ask = (args: string[], answers: string) => {
    const stdin = new PassThrough();
    stdin.end(answers);
    return runInProcess(['admin:create', ...args], { db: h.db, config: testConfig(), stdin, interactive: true, cwd: h.dir });
  };

  test('asks for what is missing and never echoes the password', async () => {
    // Each answer is typed once its question is shown, as a person does.
    const answers: [string, string][] = [
      ['Name: ', 'Prompted Admin\r'],
      ['Email: ', 'prompted@example.com\r'],
      ['Password: ', 'hidden-pass-123\r'],
      ['Confirm password: ', 'hidden-pass-123\r'],
    ];
    const stdin = new PassThrough();
    const stdout = new PassThrough();
    const stderr = new PassThrough();
    let shown = '';
    let seen = 0;
    stdout.on('data', (chunk: Buffer) => {
      shown += chunk.toString('utf8');
      const next = answers[0];
      const at = next === undefined ? -1 : shown.indexOf(next[0], seen);
      if (next !== undefined && at !== -1) {
        seen = at + next[0].length;
        answers.shift();
        setImmediate(() => stdin.write(next[1]));
      }
    });
    const code = await run(['admin:create'], { db: h.db, config: testConfig(), stdin, stdout, stderr, interactive: true });
    assert.equal(code, 0);
    assert.equal(answers.length, 0);
    assert.match(shown, /Name: [\s\S]*Email: [\s\S]*Password: [\s\S]*Confirm password: /);
    assert.match(shown, /Prompted Admin/, 'visible answers are echoed');
    assert.ok(!shown.includes('hidden-pass-123'), `the password is echoed: ${JSON.stringify(shown)}`);
    const user = await h.services.users.attempt('prompted@example.com', 'hidden-pass-123');
    assert.equal(Number(user?.is_admin), 1);
  });

  test('asks only for what the options did not give', async () => {
    const result = await ask(['--name', 'Half', '--password', 'given-pass-123'], 'half@example.com\n');
    assert.equal(result.code, 0, result.stderr);
    assert.doesNotMatch(result.stdout, /Name: |Password: /);
    assert.notEqual(await h.services.users.attempt('half@example.com', 'given-pass-123'), null);
  });

  const failures: { name: string; answers: string; message: RegExp }[] = [
    { name: 'a confirmation that differs', answers: 'X\nx1@example.com\nfirst-pass-123\nother-pass-123\n', message: /^The password field confirmation does not match\.\n$/ },
    { name: 'a short password', answers: 'X\nx2@example.com\nshort\nshort\n', message: /^The password field must be at least 8 characters\.\n$/ },
    { name: 'an invalid email', answers: 'X\nnope\nlong-enough-1\nlong-enough-1\n', message: /^The email field must be a valid email address\.\n$/ },
    { name: 'input that ends before every answer (Ctrl+D)', answers: 'X\nx3@example.com\n', message: /^Aborted: no answer was given\.\n$/ },
  ];
  for (const failure of failures) {
    test(`refuses ${failure.name} with exit 1 and creates nobody`, async () => {
      const result = await ask([], failure.answers);
      assert.equal(result.code, 1);
      assert.match(result.stderr, failure.message);
      const users = await h.db.kysely.selectFrom('users').select('email').where('email', 'like', 'x%@example.com').execute();
      assert.deepEqual(users, []);
    });
  }
});

// A real pseudo-terminal (util-linux `script`): the password must not appear even though the
// terminal would echo anything typed in its normal mode.
test('admin:create on a real terminal hides the password it reads', { skip: !hasScript() && 'util-linux script is not installed' }, async () => {
  const cwd = mkdtempSync(join(dir, 'pty-'));
  const url = `sqlite:${join(cwd, 'app.db')}`;
  const db = connect(url);
  await migrateToLatest(db);
  try {
    const answers: [string, string][] = [
      ['Name: ', 'Terminal Admin\r'],
      ['Email: ', 'tty@example.com\r'],
      ['Password: ', 'tty-secret-pass\r'],
      ['Confirm password: ', 'tty-secret-pass\r'],
    ];
    const command = [process.execPath, ...CLI_NODE_ARGS, CLI_PATH, 'admin:create'].map((part) => JSON.stringify(part)).join(' ');
    const child = spawn('script', ['-qfec', command, '/dev/null'], {
      cwd,
      env: { PATH: process.env.PATH ?? '', ...COMPILE_CACHE, NODE_ENV: 'test', APP_KEY: TEST_APP_KEY, DATABASE_URL: url, TERM: 'dumb' },
    });
    let output = '';
    let seen = 0;
    child.stdout.on('data', (chunk: Buffer) => {
      output += chunk.toString('utf8');
      // Each answer is typed only once its question is on screen, as a person would.
      const next = answers[0];
      if (next !== undefined && output.indexOf(next[0], seen) !== -1) {
        seen = output.indexOf(next[0], seen) + next[0].length;
        answers.shift();
        child.stdin.write(next[1]);
      }
    });
    const code = await new Promise<number | null>((resolve) => child.on('close', resolve));
    assert.equal(code, 0, output);
    assert.equal(answers.length, 0, output);
    assert.match(output, /Terminal Admin/);
    assert.match(output, /Created administrator #\d+ Terminal Admin <tty@example\.com>\./);
    assert.ok(!output.includes('tty-secret-pass'), `password echoed: ${JSON.stringify(output)}`);
    const user = await createServices(db, testConfig({ DATABASE_URL: url })).users.attempt('tty@example.com', 'tty-secret-pass');
    assert.equal(Number(user?.is_admin), 1);
  } finally {
    await db.close();
  }
});

function hasScript(): boolean {
  try {
    return statSync('/usr/bin/script').isFile();
  } catch {
    return false;
  }
}
