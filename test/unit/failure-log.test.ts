// The log of repeated failures (src/lib/failure-log.ts): the first of a kind in full, the rest
// counted once per interval, one line for a recovery. Node's mock timers drive the clock.
import assert from 'node:assert/strict';
import { afterEach, beforeEach, describe, it, mock } from 'node:test';
import { FailureLog } from '../../src/lib/failure-log.js';

type Line = { level: 'error' | 'info'; details: Record<string, unknown>; message: string };

function sink(): { lines: Line[]; error(details: object, message: string): void; info(details: object, message: string): void } {
  const lines: Line[] = [];
  return {
    lines,
    error: (details, message) => lines.push({ level: 'error', details: details as Record<string, unknown>, message }),
    info: (details, message) => lines.push({ level: 'info', details: details as Record<string, unknown>, message }),
  };
}

const refused = () => Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:5433'), { code: 'ECONNREFUSED' });

/** Lets the promise a probe returned settle. */
const settle = () => new Promise((resolve) => setImmediate(resolve));

describe('FailureLog', () => {
  beforeEach(() => mock.timers.enable({ apis: ['setInterval', 'Date'] }));
  afterEach(() => mock.timers.reset());

  it('logs the first failure of a kind with its error, and counts the same failure again within the interval', () => {
    const out = sink();
    const log = new FailureLog(out, { intervalMs: 10_000 });
    const first = refused();
    for (let i = 0; i < 1000; i += 1) log.failed('db|ECONNREFUSED', 'request failed', { path: '/api/user' }, i === 0 ? first : refused());
    assert.equal(out.lines.length, 1);
    assert.equal(out.lines[0]!.details.err, first, 'the first line carries the error itself (pino writes its stack)');
    assert.equal(out.lines[0]!.details.path, '/api/user');
    mock.timers.tick(10_000);
    assert.equal(out.lines.length, 2);
    assert.equal(out.lines[1]!.message, 'request failed');
    assert.equal(out.lines[1]!.details.repeated, 999);
    assert.equal(out.lines[1]!.details.err, undefined, 'a count line has no stack');
    assert.equal((out.lines[1]!.details.error as { code?: unknown }).code, 'ECONNREFUSED');
    log.close();
  });

  it('writes one count line per interval, and none for an interval without failures', () => {
    const out = sink();
    const log = new FailureLog(out, { intervalMs: 10_000 });
    log.failed('k', 'request failed', {}, refused());
    for (let second = 1; second <= 25; second += 1) {
      mock.timers.tick(1000);
      if (second <= 13) log.failed('k', 'request failed', {}, refused());
    }
    // The first line, then 9 more in the first interval and 4 in the second; the third is quiet.
    assert.deepEqual(
      out.lines.map((line) => line.details.repeated ?? 'first'),
      ['first', 9, 4],
    );
    log.close();
  });

  it('keeps different failures apart', () => {
    const out = sink();
    const log = new FailureLog(out, { intervalMs: 10_000 });
    log.failed('a', 'request failed', {}, refused());
    log.failed('b', 'request failed', {}, new TypeError('x is not a function'));
    log.failed('a', 'request failed', {}, refused());
    assert.equal(out.lines.length, 2);
    mock.timers.tick(10_000);
    assert.deepEqual(out.lines.slice(2).map((line) => line.details.repeated), [1]);
    log.close();
  });

  it('logs a failure in full again once its kind has been quiet for an interval', () => {
    const out = sink();
    const log = new FailureLog(out, { intervalMs: 10_000 });
    log.failed('k', 'request failed', {}, refused());
    mock.timers.tick(20_000);
    log.failed('k', 'request failed', {}, refused());
    assert.equal(out.lines.length, 2);
    assert.ok(out.lines[1]!.details.err instanceof Error);
    log.close();
  });

  it('logs a recovery once, when the probe says so and nothing failed since, with the count and duration', async () => {
    const out = sink();
    let healthy = false;
    let asked = 0;
    const log = new FailureLog(out, {
      intervalMs: 10_000,
      probeEveryMs: 1000,
      probe: async () => {
        asked += 1;
        return healthy;
      },
      recoveredMessage: 'database recovered',
    });
    for (let i = 0; i < 50; i += 1) log.failed('k', 'request failed', {}, refused());
    mock.timers.tick(1000);
    await settle();
    assert.equal(asked, 1);
    assert.equal(out.lines.filter((line) => line.level === 'info').length, 0, 'no recovery while the probe fails');
    healthy = true;
    // A failure after the probe was asked: not recovered yet.
    mock.timers.tick(1000);
    log.failed('k', 'request failed', {}, refused());
    await settle();
    assert.equal(out.lines.filter((line) => line.level === 'info').length, 0, 'no recovery while failures still come');
    mock.timers.tick(1000);
    await settle();
    const recoveries = out.lines.filter((line) => line.level === 'info');
    assert.equal(recoveries.length, 1);
    assert.equal(recoveries[0]!.message, 'database recovered');
    assert.equal(recoveries[0]!.details.failures, 51);
    assert.equal(recoveries[0]!.details.ms, 3000);
    // Recovered: nothing more is probed or logged, and a new failure is logged in full.
    const before = asked;
    mock.timers.tick(30_000);
    await settle();
    assert.equal(asked, before);
    log.recovered();
    assert.equal(out.lines.filter((line) => line.level === 'info').length, 1, 'a recovery is logged once');
    log.failed('k', 'request failed', {}, refused());
    assert.ok(out.lines.at(-1)!.details.err instanceof Error);
    log.close();
  });

  it('says nothing of a recovery when nothing failed', () => {
    const out = sink();
    const log = new FailureLog(out, { intervalMs: 10_000 });
    log.recovered();
    assert.deepEqual(out.lines, []);
  });
});
