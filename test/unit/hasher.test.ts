// Password hashes: argon2id with OWASP's parameters for new hashes; Laravel's bcrypt hashes verify
// and are marked for rehashing.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { hash } from '@node-rs/argon2';
import bcrypt from 'bcryptjs';
import { hashPassword, needsRehash, verifyDummy, verifyPassword } from '../../src/modules/passwords/hasher.js';

// Laravel writes bcrypt hashes with PHP's $2y$ tag; bcryptjs writes $2b$ (the same algorithm).
const laravelHash = (password: string) => bcrypt.hashSync(password, 4).replace(/^\$2b\$/, '$2y$');

describe('password hasher', () => {
  it('hashes with argon2id at m=19 MiB, t=2, p=1 or more', async () => {
    const stored = await hashPassword('correct horse');
    const match = /^\$argon2id\$v=19\$m=(\d+),t=(\d+),p=(\d+)\$/.exec(stored);
    assert.ok(match, stored);
    assert.ok(Number(match[1]) >= 19456);
    assert.ok(Number(match[2]) >= 2);
    assert.equal(await verifyPassword(stored, 'correct horse'), true);
    assert.equal(await verifyPassword(stored, 'correct horsE'), false);
  });

  it('salts every hash', async () => {
    assert.notEqual(await hashPassword('same'), await hashPassword('same'));
  });

  it("verifies Laravel's $2y$ bcrypt hashes, and $2a$/$2b$ ones", async () => {
    const y = laravelHash('secret-password');
    assert.match(y, /^\$2y\$04\$/);
    assert.equal(await verifyPassword(y, 'secret-password'), true);
    assert.equal(await verifyPassword(y, 'secret-passwore'), false);
    assert.equal(await verifyPassword(y.replace('$2y$', '$2a$'), 'secret-password'), true);
    assert.equal(await verifyPassword(y.replace('$2y$', '$2b$'), 'secret-password'), true);
  });

  const malformed = ['', 'plaintext', '$2y$04$short', '$argon2id$v=19$garbage', '$1$md5$hash', 'null'];
  for (const stored of malformed) {
    it(`refuses any password against the malformed hash ${JSON.stringify(stored)}`, async () => {
      assert.equal(await verifyPassword(stored, 'anything'), false);
      assert.equal(await verifyPassword(stored, stored), false);
    });
  }

  it('asks for a rehash of bcrypt and of weaker argon2 hashes, not of current ones', async () => {
    assert.equal(needsRehash(await hashPassword('x')), false);
    assert.equal(needsRehash(laravelHash('x')), true);
    assert.equal(needsRehash(await hash('x', { algorithm: 2, memoryCost: 4096, timeCost: 2, parallelism: 1 })), true);
    assert.equal(needsRehash(await hash('x', { algorithm: 1, memoryCost: 19456, timeCost: 2, parallelism: 1 })), true);
  });

  it('answers false for the dummy verification used when no account exists', async () => {
    assert.equal(await verifyDummy('tessera-dummy-password-for-timing'), false);
    assert.equal(await verifyDummy('anything'), false);
  });
});
