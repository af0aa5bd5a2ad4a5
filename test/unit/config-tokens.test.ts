// The configuration of tokens and of the API's limits: parsed at start-up, invalid values fail
// with a message naming the variable.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ConfigError, loadConfig } from '../../src/config.js';
import { TEST_APP_KEY } from '../helpers.js';

const load = (env: Record<string, string>) => loadConfig({ NODE_ENV: 'test', APP_KEY: TEST_APP_KEY, ...env });

describe('SANCTUM_EXPIRATION', () => {
  const valid: Array<[string | undefined, number | null]> = [
    [undefined, null],
    ['', null],
    ['null', null],
    ['NULL', null],
    [' null ', null],
    ['60', 60],
    ['1.5', 1.5],
    ['0.25', 0.25],
  ];
  for (const [raw, expected] of valid) {
    it(`reads ${JSON.stringify(raw)} as ${String(expected)} minutes`, () => {
      assert.equal(load(raw === undefined ? {} : { SANCTUM_EXPIRATION: raw }).tokenExpirationMinutes, expected);
    });
  }

  for (const raw of ['abc', '0', '-5', '1,5', 'Infinity', '10m']) {
    it(`refuses ${JSON.stringify(raw)} at start-up, naming the variable`, () => {
      assert.throws(() => load({ SANCTUM_EXPIRATION: raw }), (error: unknown) => error instanceof ConfigError && /SANCTUM_EXPIRATION/.test(error.message));
    });
  }
});

describe('SANCTUM_TOKEN_PREFIX', () => {
  it('is empty by default', () => {
    assert.equal(load({}).tokenPrefix, '');
  });

  it('keeps a prefix of letters, digits, "_" and "-"', () => {
    assert.equal(load({ SANCTUM_TOKEN_PREFIX: 'tessera_live-1' }).tokenPrefix, 'tessera_live-1');
  });

  for (const raw of ['with space', 'pipe|', 'dollar$']) {
    it(`refuses ${JSON.stringify(raw)}, naming the variable`, () => {
      assert.throws(() => load({ SANCTUM_TOKEN_PREFIX: raw }), (error: unknown) => error instanceof ConfigError && /SANCTUM_TOKEN_PREFIX/.test(error.message));
    });
  }
});

describe('BODY_LIMIT', () => {
  it('is 1 MiB by default', () => {
    assert.equal(load({}).bodyLimit, 1024 * 1024);
  });

  it('refuses a value that is not a whole number, naming the variable', () => {
    assert.throws(() => load({ BODY_LIMIT: '1MB' }), /BODY_LIMIT/);
  });
});
