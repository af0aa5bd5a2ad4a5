// Runs every test/**/*.test.ts file with node's own test runner (TypeScript through tsx).
// Node 20 has no glob in --test, so the files are listed here. Extra arguments are passed on,
// e.g. `npm test -- test/api/tokens.test.ts` to run one file.
import { spawnSync } from 'node:child_process';
import { readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';

function find(dir) {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) return find(path);
    return name.endsWith('.test.ts') ? [path] : [];
  });
}

const args = process.argv.slice(2);
const files = args.length > 0 ? args : find('test').sort();
const result = spawnSync(
  process.execPath,
  // A test that hangs fails after 5 minutes (the longest suite takes about 25 s) instead of holding the whole run (and CI) forever.
  ['--import', 'tsx', '--test', '--test-concurrency=2', '--test-timeout=300000', '--test-reporter=spec', ...files],
  { stdio: 'inherit', env: { ...process.env, NODE_ENV: 'test' } },
);
process.exit(result.status ?? 1);
