// The read cache on a real SQLite file with two connections: whatever changes the database — a
// write on the cache's own connection, a commit by another connection (another instance, the
// CLI) — drops every entry before the next lookup; inside a transaction nothing is kept; a value
// that holds until a given time is read again after it.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, beforeEach, describe, test } from 'node:test';
import SQLite from 'better-sqlite3';
import { CommitWatch } from '../../src/perf/commit-watch.js';
import { ReadCache, SqliteChanges, type Held } from '../../src/perf/read-cache.js';

// Both ways of seeing another connection's commits: SQLite's WAL-index header (the service's
// databases), and PRAGMA data_version where there is no WAL index (a rollback-journal file).
for (const journal of ['wal', 'delete'] as const) describe(`read cache (journal_mode ${journal})`, () => {
  let dir: string;
  let own: SQLite.Database;
  let other: SQLite.Database;
  let watch: CommitWatch;
  let cache: ReadCache<number, string>;
  let loads: number;
  const read =
    (id: number, until: number | null = null) =>
    async (): Promise<Held<string> | undefined> => {
      loads += 1;
      const name = own.prepare('SELECT name FROM t WHERE id = ?').pluck().get(id) as string | undefined;
      return name === undefined ? undefined : { value: name, until };
    };

  before(() => {
    dir = mkdtempSync(join(tmpdir(), 'tessera-token-cache-'));
    own = new SQLite(join(dir, 'db.sqlite'));
    own.pragma(`journal_mode = ${journal}`);
    own.exec('CREATE TABLE t (id INTEGER PRIMARY KEY, name TEXT)');
    other = new SQLite(join(dir, 'db.sqlite'));
    watch = new CommitWatch(own, join(dir, 'db.sqlite'));
  });
  after(() => {
    own.close();
    other.close();
    watch.close();
    rmSync(dir, { recursive: true, force: true });
  });
  beforeEach(() => {
    own.exec("DELETE FROM t; INSERT INTO t VALUES (1, 'one'), (2, 'two'), (3, 'three')");
    cache = new ReadCache<number, string>(new SqliteChanges(own, watch), 2);
    loads = 0;
  });

  test('a second lookup of an unchanged database is served from memory', async () => {
    assert.equal(await cache.get(1, read(1)), 'one');
    assert.equal(await cache.get(1, read(1)), 'one');
    assert.equal(loads, 1);
    assert.equal(cache.size, 1);
  });

  test('an id the database lacks is not kept', async () => {
    assert.equal(await cache.get(9, read(9)), undefined);
    assert.equal(await cache.get(9, read(9)), undefined);
    assert.equal(loads, 2);
    assert.equal(cache.size, 0);
  });

  test("a write on the cache's own connection drops the cache", async () => {
    await cache.get(1, read(1));
    own.prepare("UPDATE t SET name = 'uno' WHERE id = 1").run();
    assert.equal(await cache.get(1, read(1)), 'uno');
    own.prepare('DELETE FROM t WHERE id = 1').run();
    assert.equal(await cache.get(1, read(1)), undefined);
    assert.equal(loads, 3);
  });

  test('a write to another row also drops the cache (nothing is tracked per row)', async () => {
    await cache.get(1, read(1));
    own.prepare("UPDATE t SET name = 'deux' WHERE id = 2").run();
    await cache.get(1, read(1));
    assert.equal(loads, 2);
  });

  test('a commit by another connection (another process) drops the cache', async () => {
    await cache.get(1, read(1));
    other.prepare('DELETE FROM t WHERE id = 1').run();
    assert.equal(await cache.get(1, read(1)), undefined);
    assert.equal(loads, 2);
  });

  test('inside a transaction the cache is neither read nor filled', async () => {
    await cache.get(1, read(1));
    own.exec('BEGIN');
    own.prepare("UPDATE t SET name = 'uncommitted' WHERE id = 1").run();
    assert.equal(await cache.get(1, read(1)), 'uncommitted');
    assert.equal(await cache.get(2, read(2)), 'two');
    assert.equal(await cache.get(2, read(2)), 'two');
    assert.equal(loads, 4);
    // Only the entry from before the transaction: nothing read inside it was kept.
    assert.equal(cache.size, 1);
    own.exec('ROLLBACK');
    assert.equal(await cache.get(1, read(1)), 'one');
  });

  test('a row loaded while the database changed is not kept', async () => {
    // The load reads, then another request writes before the load's promise settles.
    const racing = async () => {
      const value = await read(1)();
      own.prepare('DELETE FROM t WHERE id = 1').run();
      return value;
    };
    assert.equal(await cache.get(1, racing), 'one');
    assert.equal(cache.size, 0);
    assert.equal(await cache.get(1, read(1)), undefined);
  });

  test('a row loaded across a drop by another lookup is not kept', async () => {
    let release!: () => void;
    const slow = async () => {
      const value = await read(1)();
      await new Promise<void>((resolve) => (release = resolve));
      return value;
    };
    const pending = cache.get(1, slow);
    other.prepare('DELETE FROM t WHERE id = 1').run();
    // This lookup sees the change first and drops the cache; the slow one must not refill it.
    assert.equal(await cache.get(2, read(2)), 'two');
    release();
    assert.equal(await pending, 'one');
    assert.equal(await cache.get(1, read(1)), undefined);
  });

  test('peek answers a kept value without loading, and nothing once anything changed', async () => {
    assert.equal(cache.peek(1), undefined, 'nothing kept yet');
    assert.equal(loads, 0);
    await cache.get(1, read(1));
    assert.equal(cache.peek(1), 'one');
    assert.equal(cache.peek(2), undefined, 'another key is not kept');
    assert.equal(loads, 1);
    own.prepare("UPDATE t SET name = 'deux' WHERE id = 2").run();
    assert.equal(cache.peek(1), undefined, "a write on the cache's own connection");
    await cache.get(1, read(1));
    other.prepare("UPDATE t SET name = 'uno' WHERE id = 1").run();
    assert.equal(cache.peek(1), undefined, 'a commit by another connection');
    assert.equal(await cache.get(1, read(1)), 'uno');
    own.exec('BEGIN');
    assert.equal(cache.peek(1), undefined, 'inside a transaction');
    own.exec('ROLLBACK');
    assert.equal(cache.peek(1), 'uno');
  });

  test('within a request the commit watch is read once; outside one, at every look', async () => {
    const changes = new SqliteChanges(own, watch);
    const current = watch.current.bind(watch);
    let reads = 0;
    watch.current = () => {
      reads += 1;
      return current();
    };
    try {
      changes.version();
      changes.version();
      assert.equal(reads, 2, 'outside a request');
      reads = 0;
      await changes.request(async () => {
        changes.version();
        await new Promise((resolve) => setImmediate(resolve));
        changes.version();
        changes.version();
      });
      assert.equal(reads, 1, 'inside one');
    } finally {
      watch.current = current;
    }
  });

  test("a request sees what was committed before it arrived, and its own connection's writes at every look", async () => {
    const changes = new SqliteChanges(own, watch);
    cache = new ReadCache<number, string>(changes, 2);
    let release!: () => void;
    const waiting = new Promise<void>((resolve) => (release = resolve));
    // A request that arrived first, and is still at work when another connection commits.
    const first = changes.request(async () => {
      assert.equal(await cache.get(1, read(1)), 'one');
      await waiting;
      // The commit came after this request arrived; a later request has loaded its value since.
      const late = await cache.get(1, read(1));
      const loadsBefore = loads;
      // Its reading is older than the later request's: that moves nothing, or every look of
      // the two in turn would drop the cache.
      await cache.get(1, read(1));
      const again = await changes.request(() => cache.get(1, read(1)));
      const steady = loads === loadsBefore && again === 'committed';
      own.prepare("UPDATE t SET name = 'own' WHERE id = 3").run();
      return { late, steady, written: await cache.get(3, read(3)) };
    });
    other.prepare("UPDATE t SET name = 'committed' WHERE id = 1").run();
    assert.equal(await changes.request(() => cache.get(1, read(1))), 'committed', 'the next request sees the commit');
    release();
    const { late, steady, written } = await first;
    assert.equal(late, 'committed', 'no older value comes back to the earlier request');
    assert.ok(steady, 'readings of different age do not drop the cache by turns');
    assert.equal(written, 'own', "the request's own write is seen at its next look");
  });

  test('at most maxEntries are kept, the oldest goes first', async () => {
    await cache.get(1, read(1));
    await cache.get(2, read(2));
    await cache.get(3, read(3));
    assert.equal(cache.size, 2);
    loads = 0;
    await cache.get(3, read(3));
    await cache.get(2, read(2));
    assert.equal(loads, 0);
    await cache.get(1, read(1));
    assert.equal(loads, 1);
  });
});

describe('read cache: values that hold until a time', () => {
  test('a value is read again once its time has come, and not before', async () => {
    const db = new SQLite(':memory:');
    const cache = new ReadCache<string, number>(new SqliteChanges(db, new CommitWatch(db, null)), 10);
    let loads = 0;
    const load = async () => ({ value: (loads += 1), until: 1_000 });
    assert.equal(await cache.get('k', load, 500), 1);
    assert.equal(await cache.get('k', load, 999), 1);
    assert.equal(await cache.get('k', load, 1_000), 2);
    assert.equal(cache.size, 1);
    // The value loaded at 1,000 holds until 1,000 too: peek finds it spent.
    assert.equal(cache.peek('k', 999), 2);
    assert.equal(cache.peek('k', 1_000), undefined);
    db.close();
  });
});
