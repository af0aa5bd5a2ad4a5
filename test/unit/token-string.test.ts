// The plaintext token format (Sanctum 4's layout) and the stored digest.
import assert from 'node:assert/strict';
import { crc32 } from 'node:zlib';
import { describe, it } from 'node:test';
import { digestBytes, generateSecret, hashSecret, parseToken, randomAlphanumeric, sameDigest, secretDigest } from '../../src/modules/tokens/token-string.js';

const crcHex = (text: string) => crc32(text).toString(16).padStart(8, '0');

describe('token secrets', () => {
  it('are 40 alphanumerics followed by the CRC32 of those 40 in lower-case hex', () => {
    const secret = generateSecret('');
    assert.match(secret, /^[A-Za-z0-9]{40}[0-9a-f]{8}$/);
    assert.equal(secret.slice(40), crcHex(secret.slice(0, 40)));
  });

  it('start with SANCTUM_TOKEN_PREFIX when one is configured', () => {
    const secret = generateSecret('tessera_');
    assert.match(secret, /^tessera_[A-Za-z0-9]{40}[0-9a-f]{8}$/);
    assert.equal(secret.slice(48), crcHex(secret.slice(8, 48)));
  });

  it('uses the CRC32 that PHP calls crc32b (a known vector)', () => {
    // hash('crc32b', 'The quick brown fox jumps over the lazy dog') in PHP.
    assert.equal(crcHex('The quick brown fox jumps over the lazy dog'), '414fa339');
  });

  // The checksum is written in two 16-bit halves (token-string.ts): a CRC whose high half is
  // small, or whose low half is, must still come out as 8 padded digits.
  it('write every CRC as 8 lower-case hex digits, whatever its size', () => {
    const find = (wanted: (crc: number) => boolean) => {
      for (;;) {
        const entropy = randomAlphanumeric(40);
        if (wanted(crc32(entropy))) return entropy;
      }
    };
    const cases = [
      find((crc) => crc < 0x10000),
      find((crc) => (crc & 0xffff) < 0x1000 && crc >= 0x80000000),
      find((crc) => crc >= 0xf0000000),
    ];
    for (const entropy of cases) {
      const secret = `${entropy}${crcHex(entropy)}`;
      assert.deepEqual(parseToken(`7|${secret}`, ''), { id: 7, secret });
      // Upper-case digits are not the checksum Sanctum writes.
      if (/[a-f]/.test(crcHex(entropy))) assert.equal(parseToken(`7|${entropy}${crcHex(entropy).toUpperCase()}`, ''), null);
    }
  });

  it('are different every time', () => {
    const secrets = new Set(Array.from({ length: 200 }, () => generateSecret('')));
    assert.equal(secrets.size, 200);
  });

  it('draw on the whole alphabet of 62 characters', () => {
    const seen = new Set(randomAlphanumeric(6200));
    assert.equal(seen.size, 62);
    assert.ok([...seen].every((c) => /[A-Za-z0-9]/.test(c)));
  });

  it('are stored as their SHA-256 in hex', () => {
    assert.equal(hashSecret('abc'), 'ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad');
  });
});

describe('parseToken', () => {
  // A checksum with at least one letter, so that its upper-case form differs.
  const secret = Array.from({ length: 50 }, () => generateSecret('')).find((s) => /[a-f]/.test(s.slice(40))) ?? '';
  const prefixed = generateSecret('tk_');
  const flipCrc = (s: string) => s.slice(0, -1) + (s.endsWith('0') ? '1' : '0');

  it('accepts `<id>|<secret>` and returns both parts', () => {
    assert.deepEqual(parseToken(`42|${secret}`, ''), { id: 42, secret });
    assert.deepEqual(parseToken(`7|${prefixed}`, 'tk_'), { id: 7, secret: prefixed });
  });

  const refused: Array<[string, string, string]> = [
    ['an empty string', '', ''],
    ['no pipe', secret, ''],
    ['no id', `|${secret}`, ''],
    ['an id of zero', `0|${secret}`, ''],
    ['an id with a leading zero', `01|${secret}`, ''],
    ['a negative id', `-1|${secret}`, ''],
    ['a non-numeric id', `abc|${secret}`, ''],
    ['an id beyond a 32-bit integer', `2147483648|${secret}`, ''],
    ['a second pipe', `1|2|${secret}`, ''],
    ['a short secret', `1|${secret.slice(1)}`, ''],
    ['a long secret', `1|${secret}0`, ''],
    ['a wrong checksum', `1|${flipCrc(secret)}`, ''],
    ['an upper-case checksum', `1|${secret.slice(0, 40)}${secret.slice(40).toUpperCase()}`, ''],
    ['a non-alphanumeric character in the random part', `1|${'-'.repeat(40)}${crcHex('-'.repeat(40))}`, ''],
    ['a secret without the configured prefix', `1|${secret}`, 'tk_'],
    ['a prefixed secret when no prefix is configured', `1|${prefixed}`, ''],
    ['another prefix of the same length', `1|xx_${prefixed.slice(3)}`, 'tk_'],
  ];
  for (const [name, plaintext, prefix] of refused) {
    it(`refuses ${name}`, () => {
      assert.equal(parseToken(plaintext, prefix), null);
    });
  }
});

describe('sameDigest over digestBytes (every stored digest check)', () => {
  it('matches the stored digest of the same secret only', () => {
    const stored = hashSecret('one');
    assert.equal(sameDigest(digestBytes(stored), secretDigest('one')), true);
    assert.equal(sameDigest(digestBytes(stored), secretDigest('two')), false);
  });

  it('matches nothing when the stored text is not exactly the 64 lowercase hex characters written', () => {
    const stored = hashSecret('one');
    for (const corrupted of [`${stored}zz`, `${stored}00`, stored.slice(0, 63), stored.toUpperCase(), '', `${stored.slice(0, 62)}g1`]) {
      assert.equal(sameDigest(digestBytes(corrupted), secretDigest('one')), false, corrupted);
    }
  });
});
