// The rules for a new password: at least 8 characters, at most 1024, confirmed.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { checkNewPassword } from '../../src/modules/passwords/policy.js';

const SHORT = 'The password field must be at least 8 characters.';
const LONG = 'The password field must not be greater than 1024 characters.';
const CONFIRM = 'The password field confirmation does not match.';

describe('checkNewPassword', () => {
  const cases: Array<[string, string, string | undefined, string[]]> = [
    ['accepts 8 characters, confirmed', 'zq8chars', 'zq8chars', []],
    ['accepts 1024 characters', 'a'.repeat(1024), 'a'.repeat(1024), []],
    ['counts characters, not UTF-16 units or bytes', '🔑🔑🔑🔑🔑🔑🔑🔑', '🔑🔑🔑🔑🔑🔑🔑🔑', []],
    ['refuses 7 characters', '1234567', '1234567', [SHORT]],
    ['refuses 7 characters that are 14 UTF-16 units', '🔑🔑🔑🔑🔑🔑🔑', '🔑🔑🔑🔑🔑🔑🔑', [SHORT]],
    ['refuses 1025 characters', 'a'.repeat(1025), 'a'.repeat(1025), [LONG]],
    ['refuses a missing confirmation', 'zq8chars', undefined, [CONFIRM]],
    ['refuses a different confirmation', 'zq8chars', 'zq8charz', [CONFIRM]],
    ['reports both a short and an unconfirmed password', 'short', 'other', [SHORT, CONFIRM]],
  ];
  for (const [name, password, confirmation, messages] of cases) {
    it(name, () => {
      assert.deepEqual(checkNewPassword(password, confirmation), messages.length === 0 ? {} : { password: messages });
    });
  }

  it('names the field it checks', () => {
    assert.deepEqual(Object.keys(checkNewPassword('x', 'x', 'en', 'new_password')), ['new_password']);
  });
});
