// TwoFactorService on the real test database (SQLite or PostgreSQL): the secret encrypted at
// rest under APP_KEY, codes accepted once with one step of skew either way, recovery codes hashed
// and single-use, a wrong confirmation that changes nothing, regeneration that retires old codes.
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { generate } from 'otplib';
import type { User } from '../../src/db/types.js';
import { RECOVERY_CODE_COUNT, TwoFactorService, groupedSecret, twoFactorEnabled } from '../../src/modules/two-factor/two-factor.service.js';
import { AppError } from '../../src/modules/shared/errors.js';
import { TEST_APP_KEY, createTestDatabase, type TestDatabase } from '../helpers.js';

const APP_KEY = Buffer.from(TEST_APP_KEY.slice('base64:'.length), 'base64');
// A fixed time in the middle of a 30-second step, so "one step away" is unambiguous.
const NOW_MS = (1_800_000_000 - (1_800_000_000 % 30) + 15) * 1000;

let counter = 0;

describe('TwoFactorService', () => {
  let database: TestDatabase;
  let service: TwoFactorService;
  let now = NOW_MS;

  before(async () => {
    database = await createTestDatabase();
    service = new TwoFactorService(database.db, APP_KEY, 'Tessera', () => now);
  });
  after(() => database.drop());

  const newUser = async (): Promise<User> => {
    counter += 1;
    const stamp = new Date().toISOString();
    const row = await database.db.kysely
      .insertInto('users')
      .values({ name: 'U', email: `tf${counter}@example.com`, password: 'x', email_verified_at: stamp, is_admin: 0, remember_token: null, locale: null, created_at: stamp, updated_at: stamp })
      .returningAll()
      .executeTakeFirstOrThrow();
    return row;
  };
  const reload = async (id: number): Promise<User> => database.db.kysely.selectFrom('users').selectAll().where('id', '=', id).executeTakeFirstOrThrow();
  /** The code of the step `steps` away from the service's clock. */
  const codeAt = (secret: string, steps = 0) => generate({ secret, epoch: Math.floor(now / 1000) + steps * 30 });

  /** A user with two-factor on, confirmed with the previous step's code (the current one is unused). */
  const enabledUser = async () => {
    const user = await newUser();
    const setup = await service.begin(user);
    const codes = await service.confirm(await reload(user.id), await codeAt(setup.secret, -1));
    assert.ok(codes !== null);
    return { id: user.id, secret: setup.secret, codes };
  };

  it('stores the secret encrypted: the column does not contain it, and another APP_KEY cannot read it', async () => {
    const user = await newUser();
    const setup = await service.begin(user);
    const stored = (await reload(user.id)).two_factor_secret;
    assert.ok(stored !== null);
    assert.ok(!stored.includes(setup.secret), 'the plaintext secret is not in the column');
    assert.ok(!stored.toUpperCase().includes(setup.secret.slice(0, 8)), 'not even a part of it');

    const otherKey = new TwoFactorService(database.db, randomBytes(32), 'Tessera', () => now);
    assert.equal(await otherKey.pendingSetup(await reload(user.id)), null);
    assert.equal(await otherKey.confirm(await reload(user.id), await codeAt(setup.secret)), null, 'a code cannot be checked without the right key');
    assert.equal(twoFactorEnabled(await reload(user.id)), false);
    // The right key reads it back.
    assert.equal((await service.pendingSetup(await reload(user.id)))?.secret, setup.secret);
  });

  it('shows the set-up as a QR code of the otpauth URI (qrcode markup only) and the secret in groups of four', async () => {
    const user = await newUser();
    const setup = await service.begin(user);
    assert.match(setup.uri, /^otpauth:\/\/totp\/Tessera:tf\d+%40example\.com\?/);
    assert.match(setup.qrSvg, /^<svg xmlns="http:\/\/www\.w3\.org\/2000\/svg"/);
    assert.ok(!setup.qrSvg.includes('example.com'), 'no text of the URI in the markup');
    assert.equal(groupedSecret('ABCDEFGHIJ'), 'ABCD EFGH IJ');
  });

  it('accepts a code once: the same code again is refused (replay)', async () => {
    const { id, secret } = await enabledUser();
    const code = await codeAt(secret);
    assert.equal(await service.verifySignIn(await reload(id), { code }), true);
    assert.equal(await service.verifySignIn(await reload(id), { code }), false);
  });

  it('accepts a code one step early or late, refuses one two steps away', async () => {
    const { id, secret } = await enabledUser();
    // Confirmed with step -1, so -1 is used; a fresh user for the earlier step.
    assert.equal(await service.verifySignIn(await reload(id), { code: await codeAt(secret, -2) }), false, '-2 steps');
    assert.equal(await service.verifySignIn(await reload(id), { code: await codeAt(secret, 2) }), false, '+2 steps');
    assert.equal(await service.verifySignIn(await reload(id), { code: await codeAt(secret, 1) }), true, '+1 step');

    const other = await newUser();
    const setup = await service.begin(other);
    assert.equal(await service.confirm(await reload(other.id), await codeAt(setup.secret, -2)), null, 'confirm refuses -2 steps');
    assert.equal(await service.confirm(await reload(other.id), await codeAt(setup.secret, 2)), null, 'confirm refuses +2 steps');
    assert.ok((await service.confirm(await reload(other.id), await codeAt(setup.secret, -1))) !== null, 'confirm accepts -1 step');
  });

  it('refuses an older code once a later one was used', async () => {
    const { id, secret } = await enabledUser();
    assert.equal(await service.verifySignIn(await reload(id), { code: await codeAt(secret, 1) }), true);
    assert.equal(await service.verifySignIn(await reload(id), { code: await codeAt(secret, 0) }), false);
  });

  it('of two requests with the same code at once, accepts only one', async () => {
    const { id, secret } = await enabledUser();
    const code = await codeAt(secret);
    const user = await reload(id);
    const results = await Promise.all([service.verifySignIn(user, { code }), service.verifySignIn(user, { code })]);
    assert.deepEqual(results.sort(), [false, true]);
  });

  it('keeps 8 recovery codes hashed; each works once, whatever its case and surrounding spaces', async () => {
    const { id, codes } = await enabledUser();
    assert.equal(codes.length, RECOVERY_CODE_COUNT);
    assert.equal(new Set(codes).size, RECOVERY_CODE_COUNT);
    const stored = (await reload(id)).two_factor_recovery_codes ?? '';
    for (const code of codes) assert.ok(!stored.includes(code), 'no plaintext code in the column');

    const code = codes[3]!;
    assert.equal(await service.verifySignIn(await reload(id), { recoveryCode: ` ${code.toUpperCase()} ` }), true);
    assert.equal(await service.verifySignIn(await reload(id), { recoveryCode: code }), false, 'used up');
    assert.equal(service.remainingRecoveryCodes(await reload(id)), RECOVERY_CODE_COUNT - 1);
    assert.equal(await service.verifySignIn(await reload(id), { recoveryCode: codes[4]! }), true, 'another still works');
    assert.equal(await service.verifySignIn(await reload(id), { recoveryCode: 'aaaaaaaaaa-aaaaaaaaaa' }), false);
  });

  it('changes nothing when the confirmation code is wrong', async () => {
    const user = await newUser();
    const setup = await service.begin(user);
    const before = await reload(user.id);
    const wrong = String((Number(await codeAt(setup.secret)) + 1) % 1_000_000).padStart(6, '0');
    for (const code of [wrong, '', 'abcdef', '12345', '1234567']) assert.equal(await service.confirm(before, code), null, code);
    assert.deepEqual(await reload(user.id), before);
    assert.equal(twoFactorEnabled(before), false);
    assert.equal(await service.verifySignIn(before, { code: await codeAt(setup.secret) }), false, 'not on: no sign-in code is checked');
  });

  it('regenerating the recovery codes retires the old ones', async () => {
    const { id, codes } = await enabledUser();
    const fresh = await service.regenerateRecoveryCodes(await reload(id));
    assert.ok(fresh !== null);
    assert.equal(fresh.length, RECOVERY_CODE_COUNT);
    assert.equal(await service.verifySignIn(await reload(id), { recoveryCode: codes[0]! }), false, 'an old code');
    assert.equal(await service.verifySignIn(await reload(id), { recoveryCode: fresh[0]! }), true, 'a new code');
  });

  it('makes no recovery codes, and begins no new set-up, for the wrong state', async () => {
    const off = await newUser();
    assert.equal(await service.regenerateRecoveryCodes(off), null);
    assert.equal((await reload(off.id)).two_factor_recovery_codes, null);

    const { id } = await enabledUser();
    const before = await reload(id);
    await assert.rejects(service.begin(before), (error: unknown) => error instanceof AppError && error.status === 409);
    assert.deepEqual(await reload(id), before, 'a working secret is not replaced');
  });

  it('turns it off: secret, recovery codes and last step deleted', async () => {
    const { id, secret } = await enabledUser();
    await service.disable(id);
    const user = await reload(id);
    assert.deepEqual([user.two_factor_secret, user.two_factor_recovery_codes, user.two_factor_confirmed_at, user.two_factor_last_step], [null, null, null, null]);
    assert.equal(await service.verifySignIn(user, { code: await codeAt(secret, 1) }), false);
  });

  it('seals recovery codes for the session so that only this APP_KEY opens them', () => {
    const sealed = service.sealRecoveryCodes(['abc-def', 'ghi-jkl']);
    assert.ok(!sealed.includes('abc-def'));
    assert.deepEqual(service.openRecoveryCodes(sealed), ['abc-def', 'ghi-jkl']);
    const other = new TwoFactorService(database.db, randomBytes(32), 'Tessera');
    assert.equal(other.openRecoveryCodes(sealed), null);
    const parts = sealed.split('.');
    const data = parts[3]!;
    parts[3] = `${data[0] === 'A' ? 'B' : 'A'}${data.slice(1)}`;
    assert.equal(service.openRecoveryCodes(parts.join('.')), null, 'an altered value');
    assert.equal(service.openRecoveryCodes(42), null);
  });

  it('checks codes against the clock it is given', async () => {
    const { id, secret } = await enabledUser();
    const code = await codeAt(secret, 3);
    assert.equal(await service.verifySignIn(await reload(id), { code }), false);
    now += 3 * 30_000;
    try {
      assert.equal(await service.verifySignIn(await reload(id), { code }), true);
    } finally {
      now = NOW_MS;
    }
  });
});
