// WEB_CONCURRENCY: how many worker processes serve the port. Parsed at start-up; an invalid value,
// or several workers each counting rate limits in its own memory, fails with a message naming
// the variable.
import assert from 'node:assert/strict';
import { availableParallelism } from 'node:os';
import { describe, it } from 'node:test';
import { ConfigError, loadConfig } from '../../src/config.js';
import { TEST_APP_KEY } from '../helpers.js';

const load = (env: Record<string, string>) => loadConfig({ NODE_ENV: 'test', APP_KEY: TEST_APP_KEY, ...env });

describe('WEB_CONCURRENCY', () => {
  const valid: Array<[Record<string, string>, number]> = [
    [{}, 1],
    [{ WEB_CONCURRENCY: '' }, 1],
    [{ WEB_CONCURRENCY: '1' }, 1],
    [{ WEB_CONCURRENCY: '4', RATE_LIMIT_STORE: 'database' }, 4],
    [{ WEB_CONCURRENCY: ' 2 ', RATE_LIMIT_STORE: 'redis' }, 2],
    [{ WEB_CONCURRENCY: 'auto', RATE_LIMIT_STORE: 'redis' }, availableParallelism()],
    [{ WEB_CONCURRENCY: 'AUTO', RATE_LIMIT_STORE: 'database' }, availableParallelism()],
  ];
  for (const [env, expected] of valid) {
    it(`reads ${JSON.stringify(env)} as ${expected} worker(s)`, () => {
      assert.equal(load(env).webConcurrency, expected);
    });
  }

  for (const raw of ['0', '-1', '2.5', 'two', '1e2', '0x2', 'auto2']) {
    it(`refuses ${JSON.stringify(raw)} at start-up, naming the variable`, () => {
      assert.throws(
        () => load({ WEB_CONCURRENCY: raw, RATE_LIMIT_STORE: 'database' }),
        (error: unknown) => error instanceof ConfigError && error.message === `WEB_CONCURRENCY must be a whole number of worker processes (1 or more) or "auto", got "${raw}".`,
      );
    });
  }

  it('refuses several workers with the memory rate-limit store (the default), naming RATE_LIMIT_STORE and the shared stores', () => {
    const memory: Record<string, string>[] = [{ WEB_CONCURRENCY: '2' }, { WEB_CONCURRENCY: '2', RATE_LIMIT_STORE: 'memory' }];
    for (const env of memory) {
      assert.throws(
        () => load(env),
        (error: unknown) =>
          error instanceof ConfigError &&
          error.message.startsWith('WEB_CONCURRENCY=2 runs 2 worker processes, and RATE_LIMIT_STORE=memory would count') &&
          error.message.includes('set RATE_LIMIT_STORE=redis or database'),
      );
    }
  });

  it('names the number of cores when "auto" meets the memory store on a machine with several', { skip: availableParallelism() < 2 && 'one core here' }, () => {
    assert.throws(() => load({ WEB_CONCURRENCY: 'auto' }), (error: unknown) => error instanceof ConfigError && error.message.startsWith(`WEB_CONCURRENCY=auto (${availableParallelism()} here) runs`));
  });

  it('allows one worker with the memory store', () => {
    assert.equal(load({ WEB_CONCURRENCY: '1', RATE_LIMIT_STORE: 'memory' }).webConcurrency, 1);
  });
});
