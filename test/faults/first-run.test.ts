// The first run on a Node.js older than the project's (issue 25 §1): better-sqlite3 13 crashes
// Node 20 with a segmentation fault and no word. `npm install` refuses such a Node in one line
// (.npmrc engine-strict), and `npm start`, `npm run dev` and `npm run cli` each say which version
// they need and exit 1 before any native module is loaded (scripts/check-node.mjs). Run with the
// machine's own older Node (Debian's /usr/bin/node), as a new user would.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { copyFileSync, existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { describe, it } from 'node:test';
import { oncePerRun } from '../support/services.js';

const ROOT = resolve(import.meta.dirname, '../..');
const OLD_NODE = process.env.OLD_NODE_PATH ?? '/usr/bin/node';
const wanted = Number(/(\d+)/.exec((JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { engines: { node: string } }).engines.node)![1]);

/** The older Node's version, or null when there is none older than the project's here. */
function oldNodeVersion(): string | null {
  if (!existsSync(OLD_NODE)) return null;
  const version = spawnSync(OLD_NODE, ['-p', 'process.versions.node'], { encoding: 'utf8' }).stdout.trim();
  return Number(version.split('.')[0]) < wanted ? version : null;
}
const oldVersion = oldNodeVersion();
// Not a missing service: a machine whose only Node is new enough has nothing to show here.
const skip = oldVersion === null ? `no Node.js older than ${wanted} at ${OLD_NODE} (OLD_NODE_PATH)` : oncePerRun('the Node.js version check');

/** npm and node of the older Node first on PATH, nothing else of this process's environment. */
const oldEnv = (): NodeJS.ProcessEnv => ({ PATH: `${dirname(OLD_NODE)}:/usr/bin:/bin`, HOME: process.env.HOME ?? '/root' });
const NEEDS = new RegExp(`^Tessera needs Node\\.js ${wanted} or newer .*this is Node\\.js ${oldVersion ?? ''}`, 'm');

describe('the first run on an older Node.js', { skip }, () => {
  for (const script of [['start'], ['run', 'dev'], ['run', 'cli', '--', 'user:create', '--help']]) {
    it(`npm ${script.join(' ')} says which Node it needs, in one line, and exits 1 (no signal)`, () => {
      const result = spawnSync('npm', script, { cwd: ROOT, env: oldEnv(), encoding: 'utf8', timeout: 30_000 });
      assert.equal(result.signal, null, `ended by ${String(result.signal)}: ${result.stderr}`);
      assert.equal(result.status, 1, result.stdout + result.stderr);
      const lines = result.stderr.split('\n').filter((line) => line.trim() !== '');
      assert.equal(lines.length, 1, result.stderr);
      assert.match(lines[0]!, NEEDS);
    });
  }

  it('npm install refuses it at once, in one clear error, before fetching anything', () => {
    const dir = mkdtempSync(join(tmpdir(), 'tessera-first-run-'));
    try {
      for (const file of ['package.json', 'package-lock.json', '.npmrc']) copyFileSync(join(ROOT, file), join(dir, file));
      const started = Date.now();
      const result = spawnSync('npm', ['install', '--dry-run', '--no-audit', '--no-fund'], { cwd: dir, env: oldEnv(), encoding: 'utf8', timeout: 60_000 });
      assert.equal(result.status, 1, result.stdout + result.stderr);
      assert.match(result.stderr, /EBADENGINE/);
      assert.match(result.stderr, new RegExp(`Required: \\{"node":">=${wanted}"\\}`));
      assert.ok(Date.now() - started < 20_000, 'fails fast');
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('the version check on the project\'s Node.js', () => {
  it('lets the running Node through, silently', () => {
    const result = spawnSync(process.execPath, [join(ROOT, 'scripts/check-node.mjs')], { encoding: 'utf8' });
    assert.equal(result.status, 0, result.stderr);
    assert.equal(result.stderr, '');
  });

  it('refuses a Node older than package.json\'s engines, whatever runs the check', { skip }, () => {
    const result = spawnSync(OLD_NODE, [join(ROOT, 'scripts/check-node.mjs')], { encoding: 'utf8' });
    assert.equal(result.status, 1);
    assert.match(result.stderr, NEEDS);
  });
});
