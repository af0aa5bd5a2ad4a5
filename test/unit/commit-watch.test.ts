// The commit watch (src/perf/commit-watch.ts) on real SQLite files: a commit by another process
// is seen at the next look, nothing else moves it, and its descriptor is closed with the database.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readdirSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import SQLite from 'better-sqlite3';
import { CommitWatch } from '../../src/perf/commit-watch.js';
import { connect } from '../../src/db/connect.js';

const dir = mkdtempSync(join(tmpdir(), 'tessera-commit-watch-'));
after(() => rmSync(dir, { recursive: true, force: true }));

/** Inserts a row from another process, as a second instance or the CLI would. */
function insertFromAnotherProcess(path: string): void {
  const script = `const S = require('better-sqlite3'); const d = new S(${JSON.stringify(path)}); d.pragma('busy_timeout = 5000'); d.prepare('INSERT INTO t (x) VALUES (1)').run(); d.close();`;
  execFileSync(process.execPath, ['-e', script], { cwd: process.cwd() });
}

function database(name: string, journal: 'wal' | 'delete') {
  const path = join(dir, name);
  const handle = new SQLite(path);
  handle.pragma(`journal_mode = ${journal}`);
  handle.exec('CREATE TABLE t (x INTEGER)');
  return { path, handle };
}

describe('commit watch', () => {
  for (const [journal, source] of [
    ['wal', 'wal-index'],
    ['delete', 'data_version'],
  ] as const) {
    it(`sees a commit by another process, and nothing moves it otherwise (journal_mode ${journal}: ${source})`, () => {
      const { path, handle } = database(`${journal}.db`, journal);
      const watch = new CommitWatch(handle, path);
      assert.equal(watch.source, source);
      handle.prepare('SELECT count(*) FROM t').get();
      const before = watch.current();
      assert.equal(watch.current(), before, 'no commit: the same value');
      handle.prepare('SELECT count(*) FROM t').get();
      assert.equal(watch.current(), before, 'a read is no commit');
      insertFromAnotherProcess(path);
      const after = watch.current();
      assert.notEqual(after, before, 'the other process committed');
      assert.equal(watch.current(), after);
      insertFromAnotherProcess(path);
      assert.notEqual(watch.current(), after, 'and again');
      handle.close();
      watch.close();
    });
  }

  it('an in-memory database has no other connection to watch', () => {
    const handle = new SQLite(':memory:');
    const watch = new CommitWatch(handle, null);
    assert.equal(watch.source, 'none');
    handle.close();
  });

  it("the service's SQLite files use the WAL index, and closing the database closes its descriptor", async () => {
    const openDescriptors = () => readdirSync('/proc/self/fd').length;
    const first = connect(`sqlite:${join(dir, 'service.db')}`);
    assert.equal(first.commits?.source, 'wal-index');
    await first.close();
    const before = openDescriptors();
    for (let i = 0; i < 20; i += 1) {
      const db = connect(`sqlite:${join(dir, 'service.db')}`);
      db.commits?.current();
      await db.close();
    }
    assert.equal(openDescriptors(), before);
  });
});

describe('commit watch: a database reached through a symbolic link', () => {
  it('reads the index beside the real file, not a stale one beside the link', () => {
    const { path, handle } = database('real.db', 'wal');
    const link = join(dir, 'link.db');
    symlinkSync(path, link);
    // A stale index beside the link, whose header would never move.
    writeFileSync(`${link}-shm`, Buffer.alloc(32 * 1024));
    const viaLink = new SQLite(link);
    const watch = new CommitWatch(viaLink, link);
    assert.equal(watch.source, 'wal-index');
    viaLink.prepare('SELECT count(*) FROM t').get();
    const before = watch.current();
    assert.equal(watch.current(), before);
    insertFromAnotherProcess(path);
    assert.notEqual(watch.current(), before);
    viaLink.close();
    handle.close();
    watch.close();
  });
});
