// The production install of the README's Deploy section, for real, in a temporary copy of the
// repository (the working tree's versions of the tracked files and of the new ones not ignored):
// `npm ci && npm run build && npm prune --omit=dev` (npm's cache makes it quick), no dev dependency
// left, then `NODE_ENV=production npm start` serves (/up, the CLI through `npm run cli`, a token
// issued and used), and SIGTERM or SIGINT sent to the npm process stops the service gracefully:
// npm exits 0, no process of the start is left, the port is free. On a SQLite file, or on a
// fresh PostgreSQL schema in the PostgreSQL run of the suite.
//
// The install does not depend on the database: it runs once, in the SQLite run (an `npm ci` of
// the whole lockfile costs over a minute of CPU). The PostgreSQL run serves and stops the same
// way from the checkout's own production build, which CI made with the same `npm ci` on its clean
// clone; a build older than src/ fails the run, naming `npm run build`.
import assert from 'node:assert/strict';
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { cpSync, existsSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, statSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import pg from 'pg';
import { TEST_APP_KEY, TEST_DATABASE_URL, onPostgres } from '../helpers.js';
import { ROOT, issueTokenHttp, withSearchPath } from '../load/server-process.js';
import { freePort } from '../support/browser.js';
import { descendants } from '../support/processes.js';
import { oncePerRun } from '../support/services.js';

/** Bounds: an install from the cache takes ~20 s here, a start ~1 s, a graceful stop well under 10 s. */
const INSTALL_MS = 240_000;
const START_MS = 30_000;
const STOP_MS = 15_000;

const dir = mkdtempSync(join(tmpdir(), 'tessera-prod-'));
/** Where npm runs: the installed copy, or (PostgreSQL run, no install) the checkout itself. */
const home = onPostgres ? ROOT : dir;
const schema = `t_${randomBytes(6).toString('hex')}`;
const DATABASE_URL = onPostgres ? withSearchPath(TEST_DATABASE_URL, schema) : `sqlite:${join(dir, 'data', 'app.db')}`;

/** Runs one statement on the PostgreSQL of the suite. */
async function postgres(statement: string): Promise<void> {
  const client = new pg.Client({ connectionString: TEST_DATABASE_URL });
  await client.connect();
  try {
    await client.query(statement);
  } finally {
    await client.end();
  }
}

/**
 * What npm and the service see: the Node running the tests first on PATH (npm runs under it),
 * npm's cache, and the headers folder for native addons when one is set; no NODE_ENV (an
 * install under NODE_ENV=production would leave the dev dependencies out before the build). The
 * machine's certificate settings pass through: behind a TLS-inspecting proxy the registry's chain
 * ends in a CA only they name, and a package not yet in npm's cache failed with
 * SELF_SIGNED_CERT_IN_CHAIN without them.
 */
const baseEnv: Record<string, string> = {
  PATH: `${dirname(process.execPath)}:${process.env.PATH ?? '/usr/bin:/bin'}`,
  HOME: process.env.HOME ?? '/root',
  npm_config_prefer_offline: 'true',
  npm_config_audit: 'false',
  npm_config_fund: 'false',
  npm_config_update_notifier: 'false',
  ...(process.env.npm_config_nodedir === undefined ? {} : { npm_config_nodedir: process.env.npm_config_nodedir }),
  ...(process.env.npm_config_cache === undefined ? {} : { npm_config_cache: process.env.npm_config_cache }),
  ...Object.fromEntries(
    ['NODE_EXTRA_CA_CERTS', 'SSL_CERT_FILE', 'SSL_CERT_DIR', 'npm_config_cafile', 'HTTPS_PROXY', 'https_proxy', 'NO_PROXY', 'no_proxy']
      .filter((name) => process.env[name] !== undefined)
      .map((name) => [name, process.env[name]!]),
  ),
};

function npm(args: string[], env: Record<string, string> = {}, timeout = INSTALL_MS): { status: number | null; output: string } {
  const result = spawnSync('npm', args, { cwd: home, env: { ...baseEnv, ...env }, encoding: 'utf8', timeout });
  return { status: result.status, output: `${result.stdout}${result.stderr}` };
}

/** Copies the working tree's tracked and new (not ignored) files into `dir`. */
function copyRepository(): void {
  const listed = spawnSync('git', ['ls-files', '-z', '--cached', '--others', '--exclude-standard'], { cwd: ROOT, encoding: 'utf8' });
  assert.equal(listed.status, 0, listed.stderr);
  for (const file of new Set(listed.stdout.split('\0').filter((name) => name !== ''))) {
    // A tracked file deleted in the working tree is not part of it.
    if (!existsSync(join(ROOT, file))) continue;
    mkdirSync(dirname(join(dir, file)), { recursive: true });
    cpSync(join(ROOT, file), join(dir, file));
  }
}

/** The newest modification time of the files under `path`. */
function newest(path: string): number {
  const stat = statSync(path);
  if (!stat.isDirectory()) return stat.mtimeMs;
  return Math.max(0, ...readdirSync(path).map((name) => newest(join(path, name))));
}

/** The checkout's dist/ is a build of its src/ as it is now (the PostgreSQL run serves from it). */
function checkoutBuildIsCurrent(): void {
  const server = join(ROOT, 'dist', 'server.js');
  assert.ok(existsSync(server), 'dist/server.js is missing: run `npm run build` first (npm ci does it)');
  assert.ok(newest(join(ROOT, 'src')) <= statSync(server).mtimeMs, 'dist/ is older than src/: run `npm run build` first');
}

/** A process that has not ended, or ended and was not yet reaped by its parent. */
const alive = (pid: number) => existsSync(`/proc/${pid}`);

function portFree(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const server = createServer();
    server.once('error', () => resolve(false));
    server.listen(port, '127.0.0.1', () => server.close(() => resolve(true)));
  });
}

type Started = { npm: ChildProcess; port: number; output(): string; exited: Promise<{ code: number | null; signal: string | null }> };

const started: ChildProcess[] = [];

/** `NODE_ENV=production npm start` in its own process group; resolves once GET /up answers 200. */
async function npmStart(): Promise<Started> {
  const port = await freePort();
  const child = spawn('npm', ['start'], {
    cwd: home,
    env: {
      ...baseEnv,
      NODE_ENV: 'production',
      APP_KEY: TEST_APP_KEY,
      HOST: '127.0.0.1',
      PORT: String(port),
      DATABASE_URL,
      DATA_DIR: join(dir, 'data'),
      LOG_LEVEL: 'info',
    },
    stdio: ['ignore', 'pipe', 'pipe'],
    detached: true,
  });
  started.push(child);
  let output = '';
  child.stdout?.on('data', (chunk: Buffer) => (output += chunk.toString('utf8')));
  child.stderr?.on('data', (chunk: Buffer) => (output += chunk.toString('utf8')));
  const exited = new Promise<{ code: number | null; signal: string | null }>((resolve) => child.once('exit', (code, signal) => resolve({ code, signal })));
  const deadline = Date.now() + START_MS;
  for (;;) {
    try {
      const response = await fetch(`http://127.0.0.1:${port}/up`, { signal: AbortSignal.timeout(1000) });
      await response.body?.cancel();
      if (response.status === 200) break;
    } catch {
      // not listening yet
    }
    if (child.exitCode !== null || Date.now() > deadline) throw new Error(`npm start did not serve: ${output}`);
    await sleep(100);
  }
  return { npm: child, port, output: () => output, exited };
}

/** Sends `signal` to the npm process alone and checks that everything it started is gone. */
async function stopWith(server: Started, signal: 'SIGTERM' | 'SIGINT'): Promise<void> {
  const tree = descendants(server.npm.pid!);
  assert.ok(
    tree.some((p) => p.cmd.includes('dist/server.js')),
    `the service runs under npm: ${JSON.stringify(tree)}`,
  );
  server.npm.kill(signal);
  const result = await Promise.race([server.exited, sleep(STOP_MS).then(() => null)]);
  assert.deepEqual(result, { code: 0, signal: null }, `npm exits 0 after ${signal}: ${server.output()}`);
  // The service shut down through its own handler (not killed), and nothing outlived npm.
  assert.match(server.output(), new RegExp(`"signal":"${signal}","msg":"shutting down"`));
  for (let i = 0; i < 50 && tree.some((p) => alive(p.pid)); i += 1) await sleep(100);
  assert.deepEqual(
    tree.filter((p) => alive(p.pid)),
    [],
    'no process of the start is left',
  );
  assert.equal(await portFree(server.port), true, 'the port is free');
}

describe(`the production install (${onPostgres ? "PostgreSQL, served from the checkout's build" : 'SQLite file, in a temporary copy of the repository'})`, () => {
  before(async () => {
    if (onPostgres) {
      checkoutBuildIsCurrent();
      await postgres(`create schema ${schema}`);
    } else copyRepository();
  });
  after(async () => {
    // Only the process groups this test started, should an assertion have left one running.
    for (const child of started) {
      try {
        process.kill(-child.pid!, 'SIGKILL');
      } catch {
        // already gone
      }
    }
    rmSync(dir, { recursive: true, force: true });
    if (onPostgres) await postgres(`drop schema if exists ${schema} cascade`);
  });

  it('installs with npm ci, builds, prunes, and leaves no dev dependency', { skip: oncePerRun('the install') }, () => {
    for (const step of [['ci'], ['run', 'build'], ['prune', '--omit=dev']]) {
      const result = npm(step);
      assert.equal(result.status, 0, `npm ${step.join(' ')}: ${result.output}`);
    }
    const manifest = JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')) as { devDependencies: Record<string, string> };
    assert.ok('typescript' in manifest.devDependencies && 'tsx' in manifest.devDependencies);
    // A dev dependency that a production one also needs (jose, for openid-client) stays, as the
    // lockfile says (no `dev` flag); any other left after the prune is a failed prune.
    const lock = JSON.parse(readFileSync(join(dir, 'package-lock.json'), 'utf8')) as { packages: Record<string, { dev?: boolean }> };
    const devOnly = Object.keys(manifest.devDependencies).filter((name) => lock.packages[`node_modules/${name}`]?.dev === true);
    assert.ok(devOnly.includes('typescript') && devOnly.includes('tsx'));
    const left = devOnly.filter((name) => existsSync(join(dir, 'node_modules', name)));
    assert.deepEqual(left, []);
    assert.equal(existsSync(join(dir, 'dist', 'server.js')), true);
  });

  it('serves with NODE_ENV=production npm start, runs the CLI, and stops on SIGTERM sent to npm', async () => {
    const server = await npmStart();
    try {
      const env = { NODE_ENV: 'production', APP_KEY: TEST_APP_KEY, DATABASE_URL, DATA_DIR: join(dir, 'data') };
      const created = npm(['run', 'cli', '--', 'user:create', '--name', 'Ops', '--email', 'ops@example.com', '--password', 'deploy-check-password-7q', '--verified'], env, START_MS);
      assert.equal(created.status, 0, created.output);
      assert.match(created.output, /Created user #\d+ Ops <ops@example.com>\./);
      const url = `http://127.0.0.1:${server.port}`;
      const token = await issueTokenHttp(url, 'ops@example.com', 'deploy-check-password-7q');
      const user = await fetch(`${url}/api/user`, { headers: { authorization: `Bearer ${token}`, accept: 'application/json' } });
      assert.equal(user.status, 200);
      assert.equal(((await user.json()) as { email: string }).email, 'ops@example.com');
    } finally {
      await stopWith(server, 'SIGTERM');
    }
  });

  it('stops on SIGINT sent to npm the same way', async () => {
    const server = await npmStart();
    const response = await fetch(`http://127.0.0.1:${server.port}/api/posts`);
    assert.equal(response.status, 200);
    await stopWith(server, 'SIGINT');
  });
});
