// A passkey's signature counter only moves forward: an answer is accepted only if it moves the
// stored counter forward (a compare-and-set), so two answers racing with the same counter (a
// cloned authenticator, or one answer replayed twice) sign in once, and a late answer with a
// lower counter never winds the stored counter back. Authenticators that always report 0 (no
// counter, as WebAuthn allows) keep working. Run through PasskeyService on the real database.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { buildTestApp, createUser, type TestApp } from '../helpers.js';
import type { PasskeyService } from '../../src/modules/passkeys/passkeys.service.js';
import { SoftPasskey } from './soft-passkey.js';

describe('passkey signature counters', () => {
  let t: TestApp;
  let service: PasskeyService;

  before(async () => {
    t = await buildTestApp();
    service = t.app.services.passkeys;
  });
  after(() => t.close());

  /** A user with a registered software passkey. */
  const owner = async (passkey = new SoftPasskey()) => {
    const user = await createUser(t.app);
    const { options, pending } = await service.registrationOptions(user, 'Key');
    await service.register(user.id, pending, passkey.create(options));
    return { user, passkey };
  };
  const storedCounter = async (userId: number) => Number((await t.db.kysely.selectFrom('passkeys').select('counter').where('user_id', '=', userId).executeTakeFirstOrThrow()).counter);
  /** An answer signed with the given counter, to a challenge of its own (as two browsers would have). */
  const answer = async (passkey: SoftPasskey, counter: number) => {
    const { options, pending } = await service.authenticationOptions('login');
    passkey.counter = counter - 1;
    return { pending, response: passkey.get(options) };
  };
  const signIn = ({ pending, response }: Awaited<ReturnType<typeof answer>>) => service.authenticate(pending, response);

  it('signs in once when two answers race with the same counter', async () => {
    const { user, passkey } = await owner();
    assert.equal(await signIn(await answer(passkey, 5)), user.id);
    for (let round = 0; round < 5; round += 1) {
      const next = 6 + round;
      const results = await Promise.all([signIn(await answer(passkey, next)), signIn(await answer(passkey, next))]);
      assert.deepEqual(results.filter((id) => id === user.id).length, 1, `round ${round}: ${JSON.stringify(results)}`);
      assert.equal(await storedCounter(user.id), next);
    }
  });

  it('never moves the stored counter backwards when a lower answer races a higher one', async () => {
    const { user, passkey } = await owner();
    assert.equal(await signIn(await answer(passkey, 10)), user.id);
    for (let round = 0; round < 5; round += 1) {
      const high = 20 + round * 10;
      const [higher, lower] = [await answer(passkey, high), await answer(passkey, high - 5)];
      const results = await Promise.all([signIn(higher), signIn(lower)]);
      assert.equal(results[0], user.id, 'the higher counter is accepted');
      assert.equal(await storedCounter(user.id), high, `round ${round}: ${JSON.stringify(results)}`);
    }
  });

  it('refuses an answer whose counter is not above the stored one', async () => {
    const { user, passkey } = await owner();
    assert.equal(await signIn(await answer(passkey, 7)), user.id);
    assert.equal(await signIn(await answer(passkey, 3)), null);
    assert.equal(await signIn(await answer(passkey, 7)), null);
    assert.equal(await storedCounter(user.id), 7);
    assert.equal(await signIn(await answer(passkey, 8)), user.id);
  });

  it('keeps authenticators without a counter (always 0) working, one at a time and at once', async () => {
    const passkey = new SoftPasskey();
    passkey.counting = false;
    const { user } = await owner(passkey);
    const zero = async () => {
      const { options, pending } = await service.authenticationOptions('login');
      return { pending, response: passkey.get(options) };
    };
    assert.equal(await signIn(await zero()), user.id);
    assert.equal(await signIn(await zero()), user.id);
    assert.deepEqual(await Promise.all([signIn(await zero()), signIn(await zero())]), [user.id, user.id]);
    assert.equal(await storedCounter(user.id), 0);
  });

  it('refuses 0 from an authenticator that has counted before (a counter never goes back to none)', async () => {
    const { user, passkey } = await owner();
    assert.equal(await signIn(await answer(passkey, 4)), user.id);
    passkey.counting = false;
    passkey.counter = 0;
    const { options, pending } = await service.authenticationOptions('login');
    assert.equal(await service.authenticate(pending, passkey.get(options)), null);
    assert.equal(await storedCounter(user.id), 4);
  });
});
