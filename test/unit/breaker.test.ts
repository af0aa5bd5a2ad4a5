// The circuit breaker in front of the limits' Redis (src/modules/rate-limit/breaker.ts): failures
// in a row open it; while open, calls are refused at once without being made (and counted as
// fallbacks); a probe after each cool-down closes it when the store answers, or keeps it open.
// The store here is a function the test answers for; test/faults/redis-frozen.test.ts runs the
// breaker against a real frozen redis-server.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { Breaker, BreakerOpenError, breakerFor, type BreakerState } from '../../src/modules/rate-limit/breaker.js';
import { createRedisClient } from '../../src/modules/rate-limit/redis.js';

/** A probe the test answers: each call waits for answer(true | false). */
function controlledProbe() {
  const pending: ((ok: boolean) => void)[] = [];
  return {
    probe: () => new Promise<void>((resolve, reject) => pending.push((ok) => (ok ? resolve() : reject(new Error('still away'))))),
    get asked() {
      return pending.length;
    },
    answer(ok: boolean) {
      const next = pending.shift();
      assert.ok(next !== undefined, 'a probe is out');
      next(ok);
    },
  };
}

async function until(what: string, predicate: () => boolean, tries = 200): Promise<void> {
  for (let tried = 1; !predicate(); tried += 1) {
    assert.ok(tried < tries, `${what} after ${tried} checks`);
    await sleep(10);
  }
}

const fail = () => Promise.reject(new Error('command timed out'));

function subject() {
  const probe = controlledProbe();
  const breaker = new Breaker({ failures: 3, coolDownMs: 20, probe: probe.probe });
  const changes: [BreakerState, BreakerState][] = [];
  breaker.onChange((state, previous) => changes.push([previous, state]));
  return { breaker, probe, changes };
}

describe('the Redis breaker', () => {
  it('stays closed while failures are not in a row, and passes answers and errors through', async () => {
    const { breaker } = subject();
    assert.equal(await breaker.run(async () => 'answer'), 'answer');
    for (let i = 0; i < 4; i += 1) {
      await assert.rejects(breaker.run(fail), /command timed out/);
      await assert.rejects(breaker.run(fail), /command timed out/);
      await breaker.run(async () => 'answer');
    }
    assert.equal(breaker.state, 'closed');
    assert.equal(breaker.fallbacks, 8, 'every failed call was answered by the fallback');
  });

  it('opens after three failures in a row and then refuses calls at once, without making them', async () => {
    const { breaker, changes } = subject();
    for (let i = 0; i < 3; i += 1) await assert.rejects(breaker.run(fail));
    assert.equal(breaker.state, 'open');
    let made = 0;
    await assert.rejects(
      breaker.run(async () => {
        made += 1;
        return 'answer';
      }),
      BreakerOpenError,
    );
    assert.equal(made, 0, 'the call was not made');
    assert.equal(breaker.fallbacks, 4);
    assert.deepEqual(changes, [['closed', 'open']]);
    breaker.stop();
  });

  it('probes after the cool-down (half-open), stays open while the probe fails, and closes when it answers', async () => {
    const { breaker, probe, changes } = subject();
    for (let i = 0; i < 3; i += 1) await assert.rejects(breaker.run(fail));
    await until('the first probe', () => probe.asked === 1);
    assert.equal(breaker.state, 'half-open');
    await assert.rejects(breaker.run(async () => 'answer'), BreakerOpenError, 'calls wait for the probe, in the background');
    probe.answer(false);
    await until('the breaker reopens', () => breaker.state === 'open');
    await until('the next probe', () => probe.asked === 1);
    probe.answer(true);
    await until('the breaker closes', () => breaker.state === 'closed');
    assert.equal(await breaker.run(async () => 'answer'), 'answer');
    assert.deepEqual(changes, [
      ['closed', 'open'],
      ['open', 'half-open'],
      ['half-open', 'open'],
      ['open', 'half-open'],
      ['half-open', 'closed'],
    ]);
    // Closed again, it takes three new failures in a row to open it.
    await assert.rejects(breaker.run(fail));
    await assert.rejects(breaker.run(fail));
    assert.equal(breaker.state, 'closed');
  });

  it('sends no probe once its client is closed for good', async () => {
    const probe = controlledProbe();
    let alive = true;
    const breaker = new Breaker({ failures: 1, coolDownMs: 10, probe: probe.probe, alive: () => alive });
    alive = false;
    await assert.rejects(breaker.run(fail));
    await sleep(50);
    assert.equal(probe.asked, 0);
    assert.equal(breaker.state, 'open');
  });

  it('is one per Redis client, shared by every user of the client', () => {
    const a = createRedisClient('redis://127.0.0.1:1');
    const b = createRedisClient('redis://127.0.0.1:1');
    try {
      assert.equal(breakerFor(a), breakerFor(a));
      assert.notEqual(breakerFor(a), breakerFor(b));
    } finally {
      a.disconnect();
      b.disconnect();
    }
  });
});
