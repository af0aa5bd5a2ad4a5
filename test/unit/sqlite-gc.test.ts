// A native abort is not an exception: no test of the service's behaviour would see one until a
// collection happened to run at the wrong time in production. This forces collections of
// prepared statements, open and after close, in a process of its own.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';

const FIXTURE = new URL('../support/sqlite-gc.ts', import.meta.url).pathname;

test('garbage collection of prepared SQLite statements, with the database open and closed, does not abort the process', () => {
  const dir = mkdtempSync(join(tmpdir(), 'tessera-gc-'));
  try {
    const result = spawnSync(process.execPath, ['--expose-gc', '--import', 'tsx', FIXTURE, join(dir, 'app.db')], { encoding: 'utf8', timeout: 60_000 });
    assert.equal(result.signal, null, `killed by ${result.signal}: ${result.stderr}`);
    assert.equal(result.status, 0, result.stderr);
    assert.equal(result.stdout.trim(), 'collected');
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
