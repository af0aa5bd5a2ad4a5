// The write probe behind GET /up (src/db/write-probe.ts) runs at most every few seconds, not once
// per request; and the errors of a database that cannot store a write, on either database, are a
// 503 with Retry-After and the same clear message (src/db/errors.ts, src/plugins/errors.ts).
// PostgreSQL's full disk (53100) cannot be made here without filling the shared server's disk,
// so its code is checked as the driver gives it.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { isDatabaseUnavailable, isDatabaseUnwritable } from '../../src/db/errors.js';
import { WriteProbe } from '../../src/db/write-probe.js';
import { describeError, UNWRITABLE_MESSAGE } from '../../src/plugins/errors.js';

function probe(outcomes: boolean[]) {
  let now = 0;
  let writes = 0;
  const subject = new WriteProbe(
    async () => {
      writes += 1;
      if (!(outcomes.shift() ?? true)) throw Object.assign(new Error('database or disk is full'), { code: 'SQLITE_FULL' });
    },
    () => now,
  );
  return { subject, writes: () => writes, advance: (ms: number) => (now += ms) };
}

describe('WriteProbe', () => {
  it('writes once for any number of checks within 5 s while writes succeed', async () => {
    const p = probe([]);
    const answers = await Promise.all(Array.from({ length: 100 }, () => p.subject.check()));
    assert.ok(answers.every((answer) => answer === true));
    for (let i = 0; i < 49; i += 1) {
      p.advance(100);
      assert.equal(await p.subject.check(), true);
    }
    assert.equal(p.writes(), 1);
    p.advance(100);
    await p.subject.check();
    assert.equal(p.writes(), 2, 'a new probe after 5 s');
  });

  it('probes again a second after a failure, so a freed disk shows soon', async () => {
    const p = probe([false, false, true]);
    assert.equal(await p.subject.check(), false);
    p.advance(999);
    assert.equal(await p.subject.check(), false);
    assert.equal(p.writes(), 1);
    p.advance(1);
    assert.equal(await p.subject.check(), false);
    p.advance(1000);
    assert.equal(await p.subject.check(), true);
    assert.equal(p.writes(), 3);
  });

  it('believes a request that met a full disk at once, before its next probe', async () => {
    const p = probe([]);
    assert.equal(await p.subject.check(), true);
    p.subject.failed();
    assert.equal(await p.subject.check(), false);
    assert.equal(p.writes(), 1);
  });
});

describe('a database that cannot store a write', () => {
  const withCode = (code: string, message = 'x') => Object.assign(new Error(message), { code });

  it('is recognised on SQLite and PostgreSQL, apart from one that cannot be reached', () => {
    for (const code of ['SQLITE_FULL', 'SQLITE_IOERR', 'SQLITE_IOERR_WRITE', 'SQLITE_IOERR_SHMSIZE', 'SQLITE_READONLY', 'SQLITE_READONLY_DBMOVED', 'ENOSPC', '53100', '58030', '25006']) {
      assert.equal(isDatabaseUnwritable(withCode(code)), true, code);
      assert.equal(isDatabaseUnavailable(withCode(code)), false, code);
    }
    for (const code of ['SQLITE_CONSTRAINT_UNIQUE', '23505', 'ECONNREFUSED', '22P02']) assert.equal(isDatabaseUnwritable(withCode(code)), false, code);
  });

  it('answers 503 with Retry-After and a message that says what to do, not what broke', () => {
    for (const error of [withCode('53100', 'could not extend file "base/16384/16385": No space left on device'), withCode('SQLITE_FULL', 'database or disk is full')]) {
      const described = describeError(error);
      assert.equal(described.status, 503);
      assert.deepEqual(described.body, { message: UNWRITABLE_MESSAGE, errors: {} });
      assert.deepEqual(described.headers, { 'retry-after': '60' });
    }
    assert.deepEqual(describeError(withCode('ECONNREFUSED', 'connect ECONNREFUSED 127.0.0.1:5433')), {
      status: 503,
      body: { message: 'Service Unavailable.', errors: {} },
      headers: { 'retry-after': '5' },
    });
  });
});
