// effectiveExpiry: the earlier of the global lifetime (from creation) and the token's own expiry.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { effectiveExpiry } from '../../src/modules/tokens/expiry.js';

const created = '2026-01-01T00:00:00.000Z';
const at = (iso: string) => Date.parse(iso);

describe('effectiveExpiry', () => {
  const cases = [
    { name: 'never, with no lifetime and no own expiry', expiresAt: null, minutes: null, expect: null },
    { name: 'the own expiry alone', expiresAt: '2026-01-02T00:00:00.000Z', minutes: null, expect: at('2026-01-02T00:00:00.000Z') },
    { name: 'the lifetime alone (decimals allowed)', expiresAt: null, minutes: 1.5, expect: at('2026-01-01T00:01:30.000Z') },
    { name: 'the lifetime when it ends first', expiresAt: '2026-01-02T00:00:00.000Z', minutes: 60, expect: at('2026-01-01T01:00:00.000Z') },
    { name: 'the own expiry when it ends first', expiresAt: '2026-01-01T00:10:00.000Z', minutes: 60, expect: at('2026-01-01T00:10:00.000Z') },
  ];
  for (const c of cases) {
    it(`is ${c.name}`, () => assert.equal(effectiveExpiry(created, c.expiresAt, c.minutes), c.expect));
  }
});
