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

// An administrator editing another account's email is an administrative act (as in Filament's
// user resource): the address changes at once, the audit line names the field, and whatever was
// pending for the account (an email change started by its owner) is dropped, so an older link
// cannot undo the administrator's change.
describe('the panel changes an email at once, audited, dropping pending changes', () => {
  let t: TestApp;
  before(async () => {
    t = await buildTestApp({ LOG_LEVEL: 'error' });
  });
  after(() => t.close());

  it('sets the new address, writes user.updated with the email field, and the owner\'s pending change is gone', async () => {
    const user = await createUser(t.app, { email: 'panel-target@example.com', password: PASSWORD });
    const fresh = (await t.app.services.users.findById(user.id))!;
    await t.app.services.emailChanges.request(fresh, 'owner-choice@example.com', 'en');
    const { client } = await signedInAdmin(t);
    const response = await client.submit(`/admin/users/${user.id}/edit`, `/admin/users/${user.id}`, { name: user.name, email: 'admin-choice@example.com', verified: '1' });
    assert.equal(response.statusCode, 303, response.body);
    assert.equal((await t.app.services.users.findById(user.id))?.email, 'admin-choice@example.com');
    assert.equal(await t.app.services.emailChanges.pending(user.id), null, 'the older pending change is dropped');
    const line = (await auditRows(t))[0];
    assert.equal(line?.action, 'user.updated');
    assert.deepEqual(JSON.parse(line?.details ?? '{}'), { fields: ['email'] });
  });
});

// A first password for an account made through a provider (no password yet): the domain's
// AuthService.setFirstPassword, with the password rules; it never replaces a password.
describe('setFirstPassword', () => {
  let t: TestApp;
  before(async () => {
    t = await buildTestApp({ LOG_LEVEL: 'error' });
  });
  after(() => t.close());

  const passwordless = async () => {
    const user = await createUser(t.app, { password: PASSWORD });
    await t.db.kysely.updateTable('users').set({ password: null }).where('id', '=', user.id).execute();
    return (await t.app.services.users.findById(user.id))!;
  };

  it('gives a password to an account without one, and the password then signs in', async () => {
    const user = await passwordless();
    assert.equal(await t.app.services.auth.setFirstPassword(user, 'a first password 7', 'a first password 7', 'en'), true);
    assert.notEqual(await t.app.services.users.attempt(user.email, 'a first password 7'), null);
  });

  it('refuses a password that breaks the rules, with the rules\' messages, and sets nothing', async () => {
    const user = await passwordless();
    await assert.rejects(t.app.services.auth.setFirstPassword(user, 'short', 'short', 'en'), (error: Error & { errors?: Record<string, string[]> }) => {
      assert.deepEqual(error.errors, { password: ['The password field must be at least 8 characters.'] });
      return true;
    });
    assert.equal((await t.app.services.users.findById(user.id))?.password, null);
  });

  it('never replaces an existing password (that is a change, with its own rules)', async () => {
    const user = await createUser(t.app, { password: PASSWORD });
    const row = (await t.app.services.users.findById(user.id))!;
    assert.equal(await t.app.services.auth.setFirstPassword(row, 'a takeover password 9', 'a takeover password 9', 'en'), false);
    assert.notEqual(await t.app.services.users.attempt(user.email, PASSWORD), null);
  });
});
