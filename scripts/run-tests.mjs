// Runs every test/**/*.test.ts file with node's own test runner (TypeScript through tsx).
// Node 20 has no glob in --test, so the files are listed here. Extra arguments are passed on,
// e.g. `npm test -- test/api/tokens.test.ts` to run one file.
import { spawnSync } from 'node:child_process';
import { lstatSync, readdirSync, statSync } from 'node:fs';
import { join, relative, sep } from 'node:path';
import { fileURLToPath } from 'node:url';

function find(dir) {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) return find(path);
    return name.endsWith('.test.ts') ? [path] : [];
  });
}

// The slowest files (seconds each when run alone, measured 2026-11-22) start first: the runner
// takes files in the order given, and a long file started last would run alone on one core at
// the end. A file missing from this list only runs later; the list never decides what runs.
const SLOWEST_FIRST = [
  'test/faults/production-install.test.ts', // 60 s (2026-11-24): npm ci, build and prune in a copy of the repository
  'test/faults/backup-restore.test.ts', // 42 s in a full run (2026-11-27): 20,000 posts, five writers, a backup, three server starts
  'test/cli/backup.test.ts', // 40 s in a full run (2026-11-27): about twenty CLI processes
  'test/security/enumeration.test.ts', // 29 s: timing comparisons of 200 tries each
  'test/faults/cluster.test.ts', // 29 s (2026-11-24): three services of two workers, two failed starts
  'test/browser/admin.test.ts', // 20 s
  'test/cli/commands.test.ts', // 20 s
  'test/faults/slow-clients.test.ts', // 16 s
  'test/cli/process.test.ts', // 14 s
  'test/browser/mobile-tables.test.ts', // 20 s in a full run (2026-11-24)
  'test/browser/accounts.test.ts', // 13 s
  'test/faults/startup-failures.test.ts', // 13 s (2026-11-24): a server process per failure
  'test/faults/full-disk.test.ts', // 13 s (2026-11-27): a tmpfs filled and freed, a server process that cannot start on it
  'test/faults/mail-log-warning.test.ts', // 19 s in a full run (2026-11-27): real production starts
  'test/faults/metrics-cluster.test.ts', // 18 s SQLite, 22 s PostgreSQL (2026-11-27): two workers, one killed
  'test/load/api-mix.test.ts', // 11 s
  'test/security/prototype-keys.test.ts', // 18 s in a full run (2026-11-24, more forms)
  'test/browser/passkeys.test.ts', // 13 s (2026-11-24)
  'test/cli/audit.test.ts', // 12 s (2026-11-24): a CLI process per command
  'test/browser/api-tokens.test.ts', // 9 s
  'test/browser/two-factor.test.ts', // 10 s (2026-11-24)
  'test/browser/security-sessions.test.ts', // 2026-11-24
  'test/browser/email-change.test.ts', // 2026-11-24
  'test/browser/two-factor-challenge.test.ts', // 2026-11-24
  'test/browser/dev-mail.test.ts', // 2026-11-24: about 10 s
  'test/feeds/sitemap.test.ts', // 5 s SQLite, 11 s PostgreSQL on a loaded machine (2026-11-24): 50,000 posts for the sitemap's limit
  'test/fuzz/forms.test.ts', // 7 s
  'test/browser/page-layout.test.ts', // 11 s in a full run (2026-11-24)
  'test/browser/blog.test.ts', // 10 s in a full run (2026-11-24)
  'test/faults/oidc-tls.test.ts', // 14 s in a full run (2026-11-27): an https provider and two server processes
  'test/browser/oidc.test.ts', // 13 s in a full run (2026-11-27): the provider's own pages
];
const rank = (file) => {
  const i = SLOWEST_FIRST.indexOf(file.split(sep).join('/'));
  return i === -1 ? SLOWEST_FIRST.length : i;
};
const order = (a, b) => rank(a) - rank(b) || (a < b ? -1 : a > b ? 1 : 0);

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
const files = args.length > 0 ? args : find('test').sort(order);
const dataBefore = snapshot();
const result = spawnSync(
  process.execPath,
  // A test that hangs fails after 5 minutes (the longest file takes about 30 s) instead of holding the whole run (and CI) forever.
  // Three files at a time on two cores: with two, a fifth of the CPU stayed idle (tests waiting on
  // Chromium, PostgreSQL, SMTP, child processes); alternating runs took 173-184 s against 189-200 s.
  ['--import', 'tsx', '--test', '--test-concurrency=3', '--test-timeout=300000', '--test-reporter=spec', ...files],
  { stdio: 'inherit', env: { ...process.env, NODE_ENV: 'test' } },
);
const dataChanges = changes(dataBefore, snapshot());
if (dataChanges.length > 0) {
  const shown = dataChanges.slice(0, 10).join(', ') + (dataChanges.length > 10 ? `, and ${dataChanges.length - 10} more` : '');
  process.stderr.write(
    `\nThe tests changed the repository's ./data (${shown}): a test must use a temporary DATA_DIR and DATABASE_URL (testDataDir in test/helpers.ts). A server of your own writing to ./data during the run shows here too.\n`,
  );
  process.exit(1);
}
process.exit(result.status ?? 1);
