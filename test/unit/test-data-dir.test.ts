// The suite never writes to the developer's ./data: the test apps and server processes default
// to a temporary DATA_DIR of their test process, removed when it exits, and the test runner
// (scripts/run-tests.mjs) fails a run that changed ./data whatever the path a test took.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { composeMail } from '../../src/modules/mail/mail.service.js';
import { buildTestApp, testConfig, testDataDir } from '../helpers.js';
import { ROOT } from '../load/server-process.js';
import { oncePerRun } from '../support/services.js';

const HELPERS = fileURLToPath(new URL('../helpers.ts', import.meta.url));

describe('the tests\' DATA_DIR', () => {
  it('is a temporary directory, not the repository\'s ./data, and the test app writes its mails there', async () => {
    const config = testConfig();
    assert.equal(config.dataDir, testDataDir());
    assert.ok(config.dataDir.startsWith(tmpdir()), config.dataDir);
    assert.notEqual(config.dataDir, join(ROOT, 'data'));
    const t = await buildTestApp();
    try {
      assert.equal(t.config.mail.mailer, 'log', 'the default mailer writes files: the case this guards');
      // Other test files of the same process may have written mails there before: one more.
      const mails = () => (existsSync(join(testDataDir(), 'mail')) ? readdirSync(join(testDataDir(), 'mail')).filter((name) => name.endsWith('.eml')).length : 0);
      const before = mails();
      t.app.services.mail.dispatch(composeMail('tmp@example.com', 'en', 'Tessera', { subject: 'Where', intro: [], action: { text: 'Go', url: 'https://app.example/' }, outro: [] }));
      await t.app.services.mail.settled();
      assert.equal(mails(), before + 1);
    } finally {
      await t.close();
    }
  });

  it('is removed when the test process exits', () => {
    const script = `import { writeFileSync } from 'node:fs'; import { join } from 'node:path'; import { testDataDir } from ${JSON.stringify(HELPERS)};
      writeFileSync(join(testDataDir(), 'left.txt'), 'x'); process.stdout.write(testDataDir());`;
    const result = spawnSync(process.execPath, ['--import', 'tsx', '--input-type=module', '--eval', script], { cwd: ROOT, encoding: 'utf8', timeout: 30_000 });
    assert.equal(result.status, 0, result.stderr);
    assert.ok(result.stdout.startsWith(tmpdir()), result.stdout);
    assert.equal(existsSync(result.stdout), false);
  });
});

describe('scripts/run-tests.mjs', { skip: oncePerRun('the test runner') }, () => {
  // A copy of the runner in a directory of its own, so that its ./data is not the repository's.
  const dir = mkdtempSync(join(tmpdir(), 'tessera-runner-'));
  mkdirSync(join(dir, 'scripts'));
  mkdirSync(join(dir, 'test'));
  copyFileSync(join(ROOT, 'scripts', 'run-tests.mjs'), join(dir, 'scripts', 'run-tests.mjs'));
  symlinkSync(join(ROOT, 'node_modules'), join(dir, 'node_modules'));
  after(() => rmSync(dir, { recursive: true, force: true }));

  const run = (name: string, body: string) => {
    writeFileSync(join(dir, 'test', `${name}.test.ts`), `import { test } from 'node:test';\nimport { mkdirSync, writeFileSync } from 'node:fs';\ntest('${name}', () => {\n${body}\n});\n`);
    // Without this test's own runner context, which would make the inner runner skip its files.
    const { NODE_TEST_CONTEXT: _context, ...env } = process.env;
    return spawnSync(process.execPath, ['scripts/run-tests.mjs', `test/${name}.test.ts`], { cwd: dir, env, encoding: 'utf8', timeout: 60_000 });
  };

  it('passes a run that leaves ./data alone', () => {
    const result = run('quiet', "writeFileSync('elsewhere.txt', 'x');");
    assert.equal(result.status, 0, result.stdout + result.stderr);
    assert.match(result.stdout, /ℹ pass 1\n/, 'the inner run really ran its test');
  });

  it('fails a run whose tests passed but wrote to ./data, naming what changed', () => {
    const result = run('writes', "mkdirSync('data/mail', { recursive: true }); writeFileSync('data/mail/reset.eml', 'x');");
    assert.equal(result.status, 1, result.stdout + result.stderr);
    assert.match(result.stdout, /ℹ pass 1\n/);
    assert.match(result.stderr, /The tests changed the repository's \.\/data \(created data, created data\/mail, created data\/mail\/reset\.eml\)/);
  });

  it('fails a run that changed a file already in ./data', () => {
    mkdirSync(join(dir, 'data'), { recursive: true });
    writeFileSync(join(dir, 'data', 'app.db'), 'mine');
    const result = run('appends', "writeFileSync('data/app.db', 'mine, and a test row');");
    assert.equal(result.status, 1, result.stdout + result.stderr);
    assert.match(result.stderr, /\(changed data, changed data\/app\.db\)|\(changed data\/app\.db\)/);
  });
});
