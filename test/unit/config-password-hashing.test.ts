// ARGON_MEMORY and ARGON_TIME, the argon2id cost of new password hashes: OWASP's minimum (19 MiB,
// two passes) by default and as the least a server accepts; lower only with NODE_ENV=test, where
// the suite's apps hash cheaply. A changed cost redoes each account's hash at its next sign-in.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { ConfigError, loadConfig } from '../../src/config.js';
import { PasswordHasher } from '../../src/modules/passwords/hasher.js';
import { buildTestApp, TEST_APP_KEY, type TestApp } from '../helpers.js';

const load = (env: Record<string, string>) => loadConfig({ APP_KEY: TEST_APP_KEY, ...env });

describe('ARGON_MEMORY and ARGON_TIME', () => {
  it("default to OWASP's minimum for argon2id, in every environment", () => {
    for (const NODE_ENV of ['production', 'development', 'test']) {
      assert.deepEqual(load({ NODE_ENV }).passwordHashing, { memoryKib: 19_456, iterations: 2 }, NODE_ENV);
    }
  });

  it('take a higher cost anywhere', () => {
    assert.deepEqual(load({ NODE_ENV: 'production', ARGON_MEMORY: '65536', ARGON_TIME: '4' }).passwordHashing, { memoryKib: 65_536, iterations: 4 });
  });

  for (const NODE_ENV of ['production', 'development']) {
    for (const [name, value] of [['ARGON_MEMORY', '19455'], ['ARGON_MEMORY', '64'], ['ARGON_TIME', '1']] as const) {
      it(`refuses ${name}=${value} below OWASP's minimum with NODE_ENV=${NODE_ENV}, naming the variable`, () => {
        assert.throws(() => load({ NODE_ENV, [name]: value }), (error: unknown) => error instanceof ConfigError && error.message.startsWith(`${name} must be between`));
      });
    }
  }

  it('take a lower cost with NODE_ENV=test only, and refuse what is not a whole number', () => {
    assert.deepEqual(load({ NODE_ENV: 'test', ARGON_MEMORY: '64', ARGON_TIME: '1' }).passwordHashing, { memoryKib: 64, iterations: 1 });
    for (const [name, value] of [['ARGON_MEMORY', '7'], ['ARGON_MEMORY', 'lots'], ['ARGON_TIME', '0'], ['ARGON_TIME', '2.5']] as const) {
      assert.throws(() => load({ NODE_ENV: 'test', [name]: value }), (error: unknown) => error instanceof ConfigError && error.message.startsWith(name), `${name}=${value}`);
    }
  });
});

describe('a changed cost', () => {
  let t: TestApp;
  before(async () => {
    t = await buildTestApp({ ARGON_MEMORY: '128', ARGON_TIME: '2' });
  });
  after(() => t.close());

  it("hashes new passwords at the app's cost, and redoes an older cost's hash at the next successful sign-in only", async () => {
    const created = await t.app.services.users.create({ name: 'New', email: 'new@example.com', password: 'a long enough password', verified: true, admin: false });
    const stored = async (email: string) => (await t.db.kysely.selectFrom('users').select('password').where('email', '=', email).executeTakeFirstOrThrow()).password ?? '';
    assert.ok((await stored(created.email)).startsWith('$argon2id$v=19$m=128,t=2,p=1$'));

    const older = await new PasswordHasher({ memoryKib: 64, iterations: 1 }).hash('an older cost password');
    await t.db.kysely.updateTable('users').set({ password: older }).where('email', '=', 'new@example.com').execute();
    const login = (password: string) => t.app.inject({ method: 'POST', url: '/api/tokens', payload: { email: 'new@example.com', password, device_name: 'cost' } });
    assert.equal((await login('a wrong password')).statusCode, 401);
    assert.equal(await stored('new@example.com'), older, 'a failed sign-in rewrites nothing');
    assert.equal((await login('an older cost password')).statusCode, 200);
    const redone = await stored('new@example.com');
    assert.ok(redone.startsWith('$argon2id$v=19$m=128,t=2,p=1$'), redone);
    assert.equal((await login('an older cost password')).statusCode, 200, 'the redone hash still matches');
  });
});
