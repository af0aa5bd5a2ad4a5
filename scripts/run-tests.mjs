// Runs every test/**/*.test.ts file with node's own test runner (TypeScript through tsx).
// Node 20 has no glob in --test, so the files are listed here. Extra arguments are passed on,
// e.g. `npm test -- test/api/tokens.test.ts` to run one file (each file in a process of its own).
//
// The whole suite runs as jobs, four at a time (two cores: tests wait on Chromium, PostgreSQL,
// SMTP and child processes, so more keep the cores busy). A job is one node process:
// - the files that start servers, the command line or fault machinery (and the timing
//   comparisons) run one per process, as each file always did;
// - the files that build apps in the process and call them with inject (test/api, unit, web,
//   admin, feeds, security, fuzz), and the browser files (each starts its Chromium and its
//   in-process server in before() and closes them in after()), run in batches, several files one
//   after the other in one process (--test-isolation=none). Each process costs one to two seconds
//   of CPU to start (tsx and 1,600 modules): with 170 processes that was a third of the suite's
//   CPU time.
// Each job's report is printed whole when it ends, so reports never interleave; a summary of
// every job closes the run. Node's compile cache (node_modules/.cache) keeps the modules'
// compiled code between processes and runs.
import { spawn, spawnSync } from 'node:child_process';
import { lstatSync, mkdirSync, readdirSync, statSync } from 'node:fs';
import { join, relative, sep } from 'node:path';
import { fileURLToPath } from 'node:url';

function find(dir) {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) return find(path);
    return name.endsWith('.test.ts') ? [path] : [];
  });
}

// Seconds a file takes in a full run (the larger of SQLite and PostgreSQL; measured 2026-11-27
// on two cores shared with a benchmark, so generous), for the files above a few seconds. The
// runner starts the longest jobs first and packs the other files into batches of about
// BATCH_SECONDS: a long job started last would run alone at the end. A file missing here counts
// as a short one; the table never decides what runs, only in what order and company.
const SECONDS = {
  'test/faults/production-install.test.ts': 63, // npm ci, build and prune in a copy of the repository
  'test/load/api-mix.test.ts': 55,
  'test/fuzz/forms.test.ts': 57,
  'test/security/prototype-keys.test.ts': 47,
  'test/security/enumeration.test.ts': 43, // timing comparisons of 200 tries each
  'test/cli/backup.test.ts': 36, // about twenty CLI processes
  'test/faults/cluster.test.ts': 33, // three services of two workers, two failed starts
  'test/faults/backup-restore.test.ts': 29, // 20,000 posts, five writers, a backup, three server starts
  'test/cli/import-laravel.test.ts': 28,
  'test/admin/posts.test.ts': 28,
  'test/admin/settings.test.ts': 24,
  'test/admin/account-rules.test.ts': 26,
  'test/faults/startup-failures.test.ts': 25, // a server process per failure
  'test/admin/users.test.ts': 25,
  'test/fuzz/api.test.ts': 20,
  'test/cli/audit.test.ts': 18, // a CLI process per command
  'test/web/blog.test.ts': 17,
  'test/browser/admin.test.ts': 17,
  'test/browser/two-factor.test.ts': 16,
  'test/web/passwordless-pages.test.ts': 15,
  'test/faults/mail-down.test.ts': 14,
  'test/browser/accounts.test.ts': 14,
  'test/faults/kill9.test.ts': 14,
  'test/browser/security-sessions.test.ts': 14,
  'test/browser/ways-around.test.ts': 14, // menus at 390 and 1280 px, en and fr, axe light and dark, /docs
  'test/faults/redis-down.test.ts': 14,
  'test/browser/mobile-tables.test.ts': 13,
  'test/cli/process.test.ts': 13,
  'test/faults/metrics-cluster.test.ts': 13, // two workers, one killed
  'test/api/rate-limit.test.ts': 13,
  'test/browser/page-layout.test.ts': 13,
  'test/security/passwords.test.ts': 13,
  'test/cli/commands.test.ts': 13,
  'test/web/settings-effect.test.ts': 12,
  'test/browser/docs.test.ts': 12,
  'test/faults/outage-logs.test.ts': 12,
  'test/browser/blog.test.ts': 12,
  'test/browser/api-tokens.test.ts': 12,
  'test/browser/passkeys.test.ts': 12,
  'test/feeds/sitemap.test.ts': 11, // 50,000 posts for the sitemap's limit
  'test/faults/log-output.test.ts': 11,
  'test/browser/email-change.test.ts': 11,
  'test/browser/audit-log.test.ts': 10,
  'test/browser/settings.test.ts': 10, // the site form and the home page, 1280 and 390 px, en and fr, axe light and dark
  'test/browser/media.test.ts': 10, // uploads, a published post's images, deletion, axe
  'test/faults/error-answers.test.ts': 10,
  'test/faults/oidc-tls.test.ts': 10, // an https provider and two server processes
  'test/unit/tokens-service.test.ts': 9,
  'test/faults/full-disk.test.ts': 9, // a tmpfs filled and freed
  'test/admin/two-factor-challenge.test.ts': 9,
  'test/faults/slow-clients.test.ts': 9,
  'test/faults/mail-log-warning.test.ts': 9, // real production starts
  'test/browser/two-factor-challenge.test.ts': 8,
  'test/browser/oidc.test.ts': 8, // the provider's own pages
  'test/browser/dev-mail.test.ts': 8,
  'test/api/account-rules.test.ts': 8,
  'test/api/openapi-client.test.ts': 10, // openapi-typescript and tsc --strict in child processes
  'test/api/contract-prism.test.ts': 8, // two Prism proxies in front of a listening service
  'test/faults/postgres-down.test.ts': 8,
};
/** What a file missing from SECONDS counts as. */
const SHORT = 2;
const secondsOf = (file) => SECONDS[file.split(sep).join('/')] ?? SHORT;
const order = (a, b) => secondsOf(b) - secondsOf(a) || (a < b ? -1 : a > b ? 1 : 0);

// The developer's own ./data (their database, app.key, the mails /_dev/mail lists) is no place
// for a test: every app, server and CLI process of the suite gets a temporary DATA_DIR
// (testDataDir in test/helpers.ts). Whatever path a test takes to write there, the run fails.
const DATA = fileURLToPath(new URL('../data', import.meta.url));

/** Every entry under ./data (and ./data itself) with its kind, size and modification time. */
function snapshot(path = DATA, entries = new Map()) {
  let stat;
  try {
    stat = lstatSync(path);
  } catch {
    return entries;
  }
  entries.set(join('data', relative(DATA, path)), `${stat.isDirectory() ? 'dir' : stat.size}@${stat.mtimeMs}`);
  if (stat.isDirectory()) for (const name of readdirSync(path)) snapshot(join(path, name), entries);
  return entries;
}

function changes(before, after) {
  const found = [];
  for (const [name, value] of after) if (before.get(name) !== value) found.push(`${before.has(name) ? 'changed' : 'created'} ${name}`);
  for (const name of before.keys()) if (!after.has(name)) found.push(`deleted ${name}`);
  return found;
}

const args = process.argv.slice(2);
const ROOT = fileURLToPath(new URL('..', import.meta.url));
const cache = join(ROOT, 'node_modules', '.cache', 'node-compile');
try {
  mkdirSync(cache, { recursive: true });
} catch {
  // No cache: the same run, a little slower.
}
const env = { ...process.env, NODE_ENV: 'test', NODE_COMPILE_CACHE: process.env.NODE_COMPILE_CACHE ?? cache };
// A test that hangs fails after 5 minutes (the longest file takes about 45 s) instead of holding the whole run (and CI) forever.
const NODE_ARGS = ['--import', 'tsx', '--test', '--test-timeout=300000', '--test-reporter=spec'];

/** Directories whose files build apps (and browsers) in their own process only: they share processes. */
const SHARED = ['test/api/', 'test/unit/', 'test/web/', 'test/admin/', 'test/feeds/', 'test/security/', 'test/fuzz/', 'test/browser/'];
/** Files of those directories that still get a process of their own: timing comparisons want a quiet process. */
const OWN_PROCESS = new Set(['test/security/enumeration.test.ts']);
/** Jobs at a time (TEST_JOBS overrides). */
const JOBS = Number(process.env.TEST_JOBS ?? 4);
/**
 * About how many seconds of files (the SECONDS table's, which a loaded run doubles) a shared
 * process runs. 60 against 30: 44 processes a run instead of 56, PostgreSQL run 212 → 183 s,
 * SQLite 348 → 343 s (2026-11-29). A fifth job at a time gained no more than the runs' spread.
 */
const BATCH_SECONDS = 60;
/** A job that has not ended after this long is stopped and counted as failed (tests time out after 5 minutes). */
const JOB_TIMEOUT_MS = 12 * 60_000;

const slash = (file) => file.split(sep).join('/');
const shared = (file) => SHARED.some((dir) => slash(file).startsWith(dir)) && !OWN_PROCESS.has(slash(file));

/**
 * The jobs of a full run, longest first: each file that wants a process of its own, and the
 * others packed into batches of about BATCH_SECONDS (the longest file first into the first
 * batch it fits, as a bin is filled).
 */
function plan(files) {
  const jobs = files.filter((file) => !shared(file)).map((file) => ({ files: [file], seconds: secondsOf(file) }));
  const batches = [];
  for (const file of files.filter(shared).sort(order)) {
    const seconds = secondsOf(file);
    const batch = batches.find((each) => each.seconds + seconds <= BATCH_SECONDS);
    if (batch === undefined) batches.push({ files: [file], seconds });
    else {
      batch.files.push(file);
      batch.seconds += seconds;
    }
  }
  return [...jobs, ...batches].sort((a, b) => b.seconds - a.seconds);
}

/** Runs one job; its whole report, exit status and counts when it ends. */
function run(job) {
  return new Promise((resolve) => {
    const started = Date.now();
    // Its own process group: a job stopped for taking too long takes its servers and browsers with it.
    const child = spawn(process.execPath, [...NODE_ARGS, '--test-isolation=none', ...job.files], { env, stdio: ['ignore', 'pipe', 'pipe'], detached: true });
    const chunks = [];
    child.stdout.on('data', (chunk) => chunks.push(chunk));
    child.stderr.on('data', (chunk) => chunks.push(chunk));
    const timer = setTimeout(() => {
      chunks.push(Buffer.from(`\nscripts/run-tests.mjs: stopped after ${JOB_TIMEOUT_MS / 60_000} minutes: ${job.files.join(', ')}\n`));
      try {
        process.kill(-child.pid, 'SIGKILL');
      } catch {
        child.kill('SIGKILL');
      }
    }, JOB_TIMEOUT_MS);
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      const text = Buffer.concat(chunks).toString('utf8');
      const counts = {};
      for (const name of ['tests', 'pass', 'fail', 'cancelled', 'skipped', 'todo']) {
        counts[name] = Number(new RegExp(`^ℹ ${name} (\\d+)$`, 'm').exec(text)?.[1] ?? 0);
      }
      resolve({ job, text, ok: code === 0 && signal === null, seconds: (Date.now() - started) / 1000, counts });
    });
  });
}

/** A full run: every job, three at a time; the reports as jobs end, then a summary. */
async function runAll(files) {
  const queue = plan(files);
  const results = [];
  const worker = async () => {
    for (let job = queue.shift(); job !== undefined; job = queue.shift()) {
      const result = await run(job);
      process.stdout.write(result.text.endsWith('\n') ? result.text : `${result.text}\n`);
      results.push(result);
    }
  };
  const started = Date.now();
  await Promise.all(Array.from({ length: JOBS }, worker));
  const total = (name) => results.reduce((sum, result) => sum + result.counts[name], 0);
  const failed = results.filter((result) => !result.ok);
  const lines = [
    '',
    `== ${results.length} processes, ${((Date.now() - started) / 1000).toFixed(0)} s`,
    ...['tests', 'pass', 'fail', 'cancelled', 'skipped', 'todo'].map((name) => `ℹ ${name} ${total(name)}`),
  ];
  const slowest = [...results].sort((a, b) => b.seconds - a.seconds).slice(0, 5);
  lines.push(`   slowest: ${slowest.map((result) => `${result.job.files.length === 1 ? result.job.files[0] : `${result.job.files.length} files from ${result.job.files[0]}`} ${result.seconds.toFixed(0)} s`).join(', ')}`);
  if (failed.length > 0) lines.push('', '✖ failed processes:', ...failed.map((result) => `  ${result.job.files.join(' ')} (${result.seconds.toFixed(0)} s)`));
  process.stdout.write(`${lines.join('\n')}\n`);
  return failed.length === 0 ? 0 : 1;
}

const dataBefore = snapshot();
let status;
if (args.length > 0) {
  // Files named on the command line: node's own runner, each file in a process of its own.
  const result = spawnSync(process.execPath, [...NODE_ARGS, '--test-concurrency=3', ...args], { stdio: 'inherit', env });
  status = result.status ?? 1;
} else {
  status = await runAll(find('test').sort(order));
}
const dataChanges = changes(dataBefore, snapshot());
if (dataChanges.length > 0) {
  const shown = dataChanges.slice(0, 10).join(', ') + (dataChanges.length > 10 ? `, and ${dataChanges.length - 10} more` : '');
  process.stderr.write(
    `\nThe tests changed the repository's ./data (${shown}): a test must use a temporary DATA_DIR and DATABASE_URL (testDataDir in test/helpers.ts). A server of your own writing to ./data during the run shows here too.\n`,
  );
  process.exit(1);
}
process.exit(status);
