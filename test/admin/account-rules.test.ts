// Deleting a user removes the same rows whichever face asks (issue 24 §2, defect 5): the
// security page (oneself), the panel (another account) and the CLI's user:delete. Every way into
// the account goes, and the password-reset row keyed by its address, which no foreign key links.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { buildTestApp, createUser, type TestApp } from '../helpers.js';
import { runInProcess } from '../cli/harness.js';
import { WebClient } from '../support/client.js';
import { login } from '../web/support.js';
import { auditRows, signedInAdmin } from './support.js';

const PASSWORD = 'deleted-everywhere-1';
const TABLES = ['sessions', 'personal_access_tokens', 'remember_tokens', 'passkeys', 'email_changes', 'known_devices', 'identities'] as const;

describe('deleting a user removes the same rows from every face', () => {
  let t: TestApp;
  let counter = 0;

  before(async () => {
    t = await buildTestApp({ LOG_LEVEL: 'error' });
  });
  after(() => t.close());

  /** A user with every kind of row that names them, and a browser signed in (remembered). */
  const accountWithEverything = async () => {
    counter += 1;
    const user = await createUser(t.app, { email: `Everything-${counter}@Example.com`, password: PASSWORD });
    const browser = new WebClient(t.app);
    await login(browser, user.email, PASSWORD, { remember: '1' });
    const now = new Date().toISOString();
    await t.app.services.tokens.issue(user.id, 'cli');
    await t.db.kysely
      .insertInto('passkeys')
      .values({ user_id: user.id, name: 'Laptop', credential_id: `cred-${user.id}`, public_key: 'pk', counter: 0, transports: '[]', backed_up: 0, last_used_at: null, created_at: now })
      .execute();
    // A panel session naming the user (as an administrator's would).
    await t.db.kysely.insertInto('sessions').values({ id: `panel-${user.id}`, user_id: null, admin_user_id: user.id, payload: '{}', expires_at: new Date(Date.now() + 3_600_000).toISOString(), updated_at: now, created_at: now, ip: null, user_agent: null }).execute();
    await t.db.kysely.insertInto('known_devices').values({ user_id: user.id, fingerprint: `device-${user.id}`, created_at: now, last_seen_at: now }).execute();
    await t.db.kysely.insertInto('identities').values({ user_id: user.id, provider: 'corp', subject: `sub-${user.id}`, email: user.email, created_at: now, last_used_at: null }).execute();
    const fresh = (await t.app.services.users.findById(user.id))!;
    await t.app.services.emailChanges.request(fresh, `next-${counter}@example.com`, 'en');
    await t.app.services.passwordResets.requestLink(user.email, 'en');
    await t.app.services.mail.settled();
    for (const [table, count] of Object.entries(await leftovers(user))) assert.ok(count > 0, `a ${table} row to delete`);
    return { user, browser };
  };

  /** What is left that names the user: a count per table. */
  const leftovers = async (user: { id: number; email: string }) => {
    const counts: Record<string, number> = {};
    const n = (rows: { n: unknown } | undefined) => Number(rows?.n ?? 0);
    for (const table of TABLES) {
      const query = t.db.kysely.selectFrom(table).select((eb) => eb.fn.countAll().as('n'));
      counts[table] = n(await (table === 'sessions' ? query.where((eb) => eb.or([eb('user_id', '=', user.id), eb('admin_user_id', '=', user.id)])) : query.where('user_id', '=', user.id)).executeTakeFirst());
    }
    counts.password_reset_tokens = n(await t.db.kysely.selectFrom('password_reset_tokens').select((eb) => eb.fn.countAll().as('n')).where('email', '=', user.email.toLowerCase()).executeTakeFirst());
    counts.users = n(await t.db.kysely.selectFrom('users').select((eb) => eb.fn.countAll().as('n')).where('id', '=', user.id).executeTakeFirst());
    return counts;
  };

  const nothingLeft = Object.fromEntries([...TABLES, 'password_reset_tokens', 'users'].map((table) => [table, 0]));

  it('from the security page (oneself)', async () => {
    const { user, browser } = await accountWithEverything();
    await browser.get('/user/confirm-password');
    await browser.post('/user/confirm-password', { password: PASSWORD });
    await browser.get('/user/delete');
    const response = await browser.post('/user/delete');
    assert.equal(response.statusCode, 303, response.body);
    assert.deepEqual(await leftovers(user), nothingLeft);
    assert.equal((await auditRows(t))[0]?.action, 'account.deleted');
  });

  it('from the panel, with its audit line', async () => {
    const { user } = await accountWithEverything();
    const { admin, client } = await signedInAdmin(t);
    await client.get(`/admin/users/${user.id}/delete`);
    const response = await client.post(`/admin/users/${user.id}/delete`);
    assert.equal(response.statusCode, 303, response.body);
    assert.deepEqual(await leftovers(user), nothingLeft);
    const line = (await auditRows(t))[0];
    assert.equal(line?.action, 'user.deleted');
    assert.equal(line?.user_id, admin.id);
    assert.equal(line?.subject_label, user.email);
  });

  it('from the CLI (user:delete EMAIL --yes), with its audit line', async () => {
    const { user } = await accountWithEverything();
    const refused = await runInProcess(['user:delete', user.email], { db: t.db, config: t.config });
    assert.notEqual(refused.code, 0, 'without a terminal to ask on, --yes is required');
    assert.equal((await leftovers(user)).users, 1);
    const result = await runInProcess(['user:delete', user.email.toUpperCase(), '--yes'], { db: t.db, config: t.config });
    assert.equal(result.code, 0, result.stderr);
    assert.match(result.stdout, new RegExp(`Deleted user #${user.id}`));
    assert.deepEqual(await leftovers(user), nothingLeft);
    const line = (await auditRows(t))[0];
    assert.equal(line?.action, 'user.deleted');
    assert.equal(line?.subject_label, user.email);
  });

  it('the CLI refuses an unknown address and deletes nothing', async () => {
    const { user } = await accountWithEverything();
    const result = await runInProcess(['user:delete', 'nobody@example.com', '--yes'], { db: t.db, config: t.config });
    assert.notEqual(result.code, 0);
    assert.match(result.stderr, /No user has the email nobody@example\.com\./);
    assert.equal((await leftovers(user)).users, 1);
  });
});
