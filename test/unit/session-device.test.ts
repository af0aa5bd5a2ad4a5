// The device a browser session shows (modules/sessions/device.ts): the browser and system its
// User-Agent names, the same however often it is asked and however many other agents were seen.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { deviceOf } from '../../src/modules/sessions/device.js';

const FIREFOX_LINUX = 'Mozilla/5.0 (X11; Linux x86_64; rv:128.0) Gecko/20100101 Firefox/128.0';
const SAFARI_IPHONE = 'Mozilla/5.0 (iPhone; CPU iPhone OS 17_5 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.5 Mobile/15E148 Safari/604.1';

describe('deviceOf', () => {
  it('names the browser and the system of an agent', () => {
    assert.deepEqual(deviceOf(FIREFOX_LINUX), { browser: 'Firefox', os: 'Linux' });
    assert.deepEqual(deviceOf(SAFARI_IPHONE), { browser: 'Mobile Safari', os: 'iOS' });
  });

  it('names no device for a missing or unknown agent', () => {
    assert.deepEqual(deviceOf(null), { browser: null, os: null });
    assert.deepEqual(deviceOf(''), { browser: null, os: null });
    assert.deepEqual(deviceOf('curl-like/1'), { browser: null, os: null });
  });

  it('answers the same for an agent asked again, after a thousand other agents, and when a caller changed its answer', () => {
    const first = deviceOf(FIREFOX_LINUX);
    first.browser = 'changed by a caller';
    assert.deepEqual(deviceOf(FIREFOX_LINUX), { browser: 'Firefox', os: 'Linux' });
    for (let i = 0; i < 1_000; i += 1) deviceOf(`Mozilla/5.0 (X11; Linux x86_64; rv:${i}.0) Gecko/20100101 Firefox/${i}.0`);
    assert.deepEqual(deviceOf(FIREFOX_LINUX), { browser: 'Firefox', os: 'Linux' });
    assert.deepEqual(deviceOf('Mozilla/5.0 (X11; Linux x86_64; rv:999.0) Gecko/20100101 Firefox/999.0'), { browser: 'Firefox', os: 'Linux' });
  });
});
