// The account-security settings: PASSWORD_TIMEOUT, ADMIN_REQUIRE_2FA and NEW_DEVICE_ALERTS are
// read at start-up with their defaults, and a bad value stops the start naming the variable.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ConfigError, loadConfig } from '../../src/config.js';
import { TEST_APP_KEY } from '../helpers.js';

const load = (env: Record<string, string>) => loadConfig({ NODE_ENV: 'test', APP_KEY: TEST_APP_KEY, ...env });

describe('account-security settings', () => {
  it('defaults to three hours of password confirmation, no panel requirement, alerts on', () => {
    const config = load({});
    assert.equal(config.passwordTimeoutSeconds, 10_800);
    assert.equal(config.adminRequireTwoFactor, false);
    assert.equal(config.newDeviceAlerts, true);
  });

  it('reads the three variables', () => {
    const config = load({ PASSWORD_TIMEOUT: '900', ADMIN_REQUIRE_2FA: 'true', NEW_DEVICE_ALERTS: 'false' });
    assert.equal(config.passwordTimeoutSeconds, 900);
    assert.equal(config.adminRequireTwoFactor, true);
    assert.equal(config.newDeviceAlerts, false);
  });

  const invalid: Array<[string, string]> = [
    ['PASSWORD_TIMEOUT', 'three hours'],
    ['PASSWORD_TIMEOUT', '0'],
    ['ADMIN_REQUIRE_2FA', 'maybe'],
    ['NEW_DEVICE_ALERTS', 'sometimes'],
  ];
  for (const [name, value] of invalid) {
    it(`refuses ${name}=${value} naming the variable`, () => {
      assert.throws(() => load({ [name]: value }), (error: unknown) => error instanceof ConfigError && error.message.startsWith(name));
    });
  }
});
