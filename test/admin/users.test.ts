// /admin/users: the table (search, sort, pages), create, edit, delete with a confirmation step,
// the rules on oneself and on making administrators, and the audit line of each action.
import assert from 'node:assert/strict';
import { after, afterEach, before, beforeEach, describe, it } from 'node:test';
import { buildTestApp, createUser, type TestApp } from '../helpers.js';
import type { WebClient } from '../support/client.js';
import { auditRows, decode, fieldError, signedInAdmin, type Admin } from './support.js';

/** The emails in the table of a users page, in order. */
const emailsOf = (html: string): string[] => [...html.matchAll(/<td data-label="Email">([^<]+@[^<]+)<\/td>/g)].map((match) => decode(match[1] ?? ''));

describe('/admin/users table', () => {
  let t: TestApp;
  let client: WebClient;
  before(async () => {
    t = await buildTestApp();
    ({ client } = await signedInAdmin(t, { name: 'Zed Admin', email: 'zed.admin@example.com' }));
    await createUser(t.app, { name: 'alice Martin', email: 'alice@example.com', verified: true });
    await createUser(t.app, { name: 'Bob Stone', email: 'bob@example.org', verified: false });
    await createUser(t.app, { name: 'Chloé 100% Dupont', email: 'chloe@example.fr', verified: true });
    for (let i = 0; i < 17; i += 1) await createUser(t.app, { name: `Filler ${String(i).padStart(2, '0')}`, email: `filler${String(i).padStart(2, '0')}@bulk.test` });
  });
  after(() => t.close());

  const searches = [
    { name: 'a name, whatever its case', q: 'ALICE', expect: ['alice@example.com'] },
    { name: 'a part of an email', q: 'example.org', expect: ['bob@example.org'] },
    { name: 'a LIKE wildcard, as a plain character', q: '100%', expect: ['chloe@example.fr'] },
    { name: 'an underscore, as a plain character', q: 'bob_', expect: [] },
    { name: 'an accented name', q: 'chloé', expect: ['chloe@example.fr'] },
  ];
  for (const row of searches) {
    it(`finds users by ${row.name}`, async () => {
      const response = await client.get(`/admin/users?q=${encodeURIComponent(row.q)}`);
      assert.equal(response.statusCode, 200);
      assert.deepEqual(emailsOf(response.body), row.expect);
    });
  }

  it('sorts by name both ways, ignoring case, and marks the sorted column', async () => {
    const asc = await client.get('/admin/users?q=example&sort=name&dir=asc');
    assert.deepEqual(emailsOf(asc.body), ['alice@example.com', 'bob@example.org', 'chloe@example.fr', 'zed.admin@example.com']);
    assert.match(asc.body, /aria-sort="ascending"><a class="sort-link" href="\/admin\/users\?q=example&amp;sort=name&amp;dir=desc">/);
    const desc = await client.get('/admin/users?q=example&sort=name&dir=desc');
    assert.deepEqual(emailsOf(desc.body), ['zed.admin@example.com', 'chloe@example.fr', 'bob@example.org', 'alice@example.com']);
  });

  it('sorts by verification with the unverified last either way', async () => {
    const asc = await client.get('/admin/users?q=example&sort=verified&dir=asc');
    assert.equal(emailsOf(asc.body).at(-1), 'bob@example.org');
    const desc = await client.get('/admin/users?q=example&sort=verified&dir=desc');
    assert.equal(emailsOf(desc.body).at(-1), 'bob@example.org');
  });

  it('ignores a sort column that is not in the list and a page that is not a number', async () => {
    const response = await client.get('/admin/users?sort=password&dir=sideways&page=drop');
    assert.equal(response.statusCode, 200);
    assert.equal(emailsOf(response.body).length, 15);
  });

  it('pages 15 at a time, keeping the search and the sort in the page links', async () => {
    const first = await client.get('/admin/users?q=bulk&sort=email&dir=asc');
    assert.deepEqual(emailsOf(first.body), Array.from({ length: 15 }, (_, i) => `filler${String(i).padStart(2, '0')}@bulk.test`));
    assert.match(first.body, /Page 1 of 2 · 17 in all/);
    assert.match(first.body, /href="\/admin\/users\?q=bulk&amp;sort=email&amp;dir=asc&amp;page=2" rel="next"/);
    const second = await client.get('/admin/users?q=bulk&sort=email&dir=asc&page=2');
    assert.deepEqual(emailsOf(second.body), ['filler15@bulk.test', 'filler16@bulk.test']);
    const beyond = await client.get('/admin/users?q=bulk&sort=email&dir=asc&page=99');
    assert.deepEqual(emailsOf(beyond.body), emailsOf(second.body), 'a page past the end shows the last one');
  });

  it('escapes what users typed', async () => {
    await createUser(t.app, { name: '<script>alert(1)</script>', email: 'xss@example.net' });
    const response = await client.get('/admin/users?q=xss');
    assert.ok(!response.body.includes('<script>alert(1)</script>'));
    assert.ok(response.body.includes('&lt;script&gt;alert(1)&lt;/script&gt;'));
  });
});

describe('/admin/users create, edit, delete', () => {
  let t: TestApp;
  let admin: Admin;
  let client: WebClient;
  beforeEach(async () => {
    t = await buildTestApp();
    ({ admin, client } = await signedInAdmin(t));
  });
  // One app per test: each starts from an empty audit log.
  afterEach(() => t.close());

  it('creates a user who is not an administrator, and logs it', async () => {
    const response = await client.submit('/admin/users/new', '/admin/users', {
      name: '  Grace Hopper  ',
      email: 'grace@example.com',
      password: 'compiler pioneer',
      password_confirmation: 'compiler pioneer',
      verified: '1',
    });
    assert.equal(response.statusCode, 303);
    assert.equal(response.headers.location, '/admin/users');
    const user = await t.app.services.users.findByEmail('grace@example.com');
    assert.ok(user);
    assert.equal(user.name, 'Grace Hopper', 'trimmed');
    assert.notEqual(user.email_verified_at, null);
    assert.equal(user.is_admin, 0);
    assert.ok(await t.app.services.users.attempt('grace@example.com', 'compiler pioneer'), 'the password works');
    const [line] = await auditRows(t);
    assert.equal(line?.action, 'user.created');
    assert.equal(line?.user_id, admin.id);
    assert.equal(line?.subject_label, 'grace@example.com');
    assert.ok(!JSON.stringify(line).includes('compiler pioneer'), 'no password in the audit log');
    const list = await client.get('/admin/users');
    assert.match(list.body, /role="status">The user Grace Hopper was created\.</);
  });

  it('never makes an administrator, whatever the form sends', async () => {
    await client.submit('/admin/users/new', '/admin/users', {
      name: 'Sneaky',
      email: 'sneaky@example.com',
      password: 'another long one',
      password_confirmation: 'another long one',
      admin: '1',
      is_admin: '1',
    });
    assert.equal((await t.app.services.users.findByEmail('sneaky@example.com'))?.is_admin, 0);
  });

  const invalidCreates = [
    { name: 'no name', form: { name: '', email: 'n1@example.com', password: 'long enough pw', password_confirmation: 'long enough pw' }, field: 'name', message: 'The name field is required.' },
    { name: 'a blank name', form: { name: '   ', email: 'n2@example.com', password: 'long enough pw', password_confirmation: 'long enough pw' }, field: 'name', message: 'The name field is required.' },
    { name: 'a malformed email', form: { name: 'N', email: 'nope', password: 'long enough pw', password_confirmation: 'long enough pw' }, field: 'email', message: 'The email field must be a valid email address.' },
    { name: 'a taken email, in another case', form: { name: 'N', email: 'TAKEN@example.com', password: 'long enough pw', password_confirmation: 'long enough pw' }, field: 'email', message: 'The email has already been taken.' },
    { name: 'a short password', form: { name: 'N', email: 'n3@example.com', password: 'short', password_confirmation: 'short' }, field: 'password', message: 'The password field must be at least 8 characters.' },
    { name: 'a common password', form: { name: 'N', email: 'n4@example.com', password: 'password123', password_confirmation: 'password123' }, field: 'password', message: 'The password is too common; choose a less guessable one.' },
    { name: 'an unconfirmed password', form: { name: 'N', email: 'n5@example.com', password: 'long enough pw', password_confirmation: 'other' }, field: 'password', message: 'The password field confirmation does not match.' },
    { name: 'no password', form: { name: 'N', email: 'n6@example.com' }, field: 'password', message: 'The password field is required.' },
  ];
  for (const row of invalidCreates) {
    it(`refuses to create a user with ${row.name}: 422, inline error, typed values kept, nothing written`, async () => {
      await createUser(t.app, { email: 'taken@example.com' });
      const before = await auditRows(t);
      const response = await client.submit('/admin/users/new', '/admin/users', row.form);
      assert.equal(response.statusCode, 422);
      assert.equal(fieldError(response.body, row.field), row.message);
      assert.match(response.body, /role="alert"/);
      if (row.form.name.trim() !== '') assert.match(response.body, new RegExp(`name="name" type="text" value="${row.form.name}"`));
      assert.ok(!response.body.includes('long enough pw'), 'passwords are not sent back');
      if (row.field !== 'email') assert.equal(await t.app.services.users.findByEmail(row.form.email), undefined);
      assert.equal((await auditRows(t)).length, before.length);
      });
  }

  it('edits name, email and verification, and logs the fields that changed', async () => {
    const user = await createUser(t.app, { name: 'Old Name', email: 'old@example.com', verified: false });
    const response = await client.submit(`/admin/users/${user.id}/edit`, `/admin/users/${user.id}`, { name: 'New Name', email: 'new@example.com', verified: '1' });
    assert.equal(response.statusCode, 303);
    const updated = await t.app.services.users.findById(user.id);
    assert.equal(updated?.name, 'New Name');
    assert.equal(updated?.email, 'new@example.com');
    assert.notEqual(updated?.email_verified_at, null);
    const [line] = await auditRows(t);
    assert.equal(line?.action, 'user.updated');
    assert.deepEqual(JSON.parse(line?.details ?? '{}'), { fields: ['name', 'email', 'verified'] });
  });

  it('keeps the original verification date when "verified" stays ticked', async () => {
    const user = await createUser(t.app, { verified: true });
    await client.submit(`/admin/users/${user.id}/edit`, `/admin/users/${user.id}`, { name: 'Renamed', email: user.email, verified: '1' });
    assert.equal((await t.app.services.users.findById(user.id))?.email_verified_at, user.email_verified_at);
  });

  it('marks a user unverified when "verified" is unticked', async () => {
    const user = await createUser(t.app, { verified: true });
    await client.submit(`/admin/users/${user.id}/edit`, `/admin/users/${user.id}`, { name: user.name, email: user.email });
    assert.equal((await t.app.services.users.findById(user.id))?.email_verified_at, null);
  });

  it('takes the panel away from another administrator, who gets 403 at once', async () => {
    const other = await signedInAdmin(t);
    const response = await client.submit(`/admin/users/${other.admin.id}/edit`, `/admin/users/${other.admin.id}`, { name: other.admin.name, email: other.admin.email, verified: '1' });
    assert.equal(response.statusCode, 303);
    assert.equal((await t.app.services.users.findById(other.admin.id))?.is_admin, 0);
    assert.equal((await other.client.get('/admin')).statusCode, 403);
    const [line] = await auditRows(t);
    assert.deepEqual(JSON.parse(line?.details ?? '{}'), { fields: ['admin'] });
  });

  const invalidEdits = [
    { name: 'an empty name', form: { name: '', email: 'keep@example.com' }, field: 'name', message: 'The name field is required.' },
    { name: 'a malformed email', form: { name: 'Keep', email: 'keep@' }, field: 'email', message: 'The email field must be a valid email address.' },
    { name: "another user's email", form: { name: 'Keep', email: 'TAKEN@example.com' }, field: 'email', message: 'The email has already been taken.' },
    { name: 'a name over 255 characters', form: { name: 'x'.repeat(256), email: 'keep@example.com' }, field: 'name', message: 'The name field must not be greater than 255 characters.' },
    { name: 'the admin box ticked on a non-administrator', form: { name: 'Keep', email: 'keep@example.com', admin: '1' }, field: 'admin', message: 'Administrators are made from the command line only (admin:promote).' },
  ];
  for (const row of invalidEdits) {
    it(`refuses an edit with ${row.name}: 422, inline error, nothing written`, async () => {
      await createUser(t.app, { email: 'taken@example.com' });
      const user = await createUser(t.app, { name: 'Keep', email: 'keep@example.com' });
      const response = await client.submit(`/admin/users/${user.id}/edit`, `/admin/users/${user.id}`, row.form);
      assert.equal(response.statusCode, 422);
      assert.equal(fieldError(response.body, row.field), row.message);
      const after = await t.app.services.users.findById(user.id);
      assert.deepEqual({ name: after?.name, email: after?.email, is_admin: after?.is_admin }, { name: 'Keep', email: 'keep@example.com', is_admin: 0 });
      assert.equal((await auditRows(t)).filter((line) => line.action === 'user.updated').length, 0);
      });
  }

  it('refuses to let an administrator demote themself (422 on the admin field)', async () => {
    const form = await client.get(`/admin/users/${admin.id}/edit`);
    assert.match(form.body, /id="field-admin" name="admin" type="checkbox" value="1" checked disabled/);
    const response = await client.post(`/admin/users/${admin.id}`, { name: admin.name, email: admin.email, verified: '1' });
    assert.equal(response.statusCode, 422);
    assert.equal(fieldError(response.body, 'admin'), 'You cannot remove your own administrator access.');
    assert.equal((await t.app.services.users.findById(admin.id))?.is_admin, 1);
    assert.equal((await client.get('/admin')).statusCode, 200);
  });

  it('lets an administrator edit their own name while staying an administrator', async () => {
    const response = await client.submit(`/admin/users/${admin.id}/edit`, `/admin/users/${admin.id}`, { name: 'Self Renamed', email: admin.email, verified: '1', admin: '1' });
    assert.equal(response.statusCode, 303);
    const after = await t.app.services.users.findById(admin.id);
    assert.equal(after?.name, 'Self Renamed');
    assert.equal(after?.is_admin, 1);
  });

  it('deletes a user after a confirmation page: tokens and sessions go, posts stay without author', async () => {
    const user = await createUser(t.app, { name: 'Leaving User', email: 'leaving@example.com' });
    const token = await t.app.services.tokens.issue(user.id, 'phone');
    const post = await t.app.services.posts.create(user.id, { title: 'Orphan post' });
    const confirm = await client.get(`/admin/users/${user.id}/delete`);
    assert.equal(confirm.statusCode, 200);
    assert.match(confirm.body, /Leaving User \(leaving@example\.com\)/);
    assert.match(confirm.body, new RegExp(`action="/admin/users/${user.id}/delete"`));
    assert.ok(await t.app.services.users.findById(user.id), 'the confirmation page deletes nothing');
    const response = await client.post(`/admin/users/${user.id}/delete`);
    assert.equal(response.statusCode, 303);
    assert.equal(await t.app.services.users.findById(user.id), undefined);
    assert.equal(await t.app.services.tokens.authenticate(t.app.services.tokens.parse(token.plaintext)), null);
    const orphan = await t.app.services.admin.findPost(post.id);
    assert.equal(orphan?.author_id, null);
    const [line] = await auditRows(t);
    assert.equal(line?.action, 'user.deleted');
    assert.equal(line?.subject_label, 'leaving@example.com');
  });

  it('refuses to let an administrator delete themself, on the confirmation page and on the action', async () => {
    const list = await client.get('/admin/users');
    assert.ok(!list.body.includes(`href="/admin/users/${admin.id}/delete"`), 'no delete link on oneself');
    assert.equal((await client.get(`/admin/users/${admin.id}/delete`)).statusCode, 403);
    const response = await client.post(`/admin/users/${admin.id}/delete`);
    assert.equal(response.statusCode, 403);
    assert.match(response.body, /You cannot delete your own account\./);
    assert.ok(await t.app.services.users.findById(admin.id));
    assert.equal((await auditRows(t)).filter((line) => line.action === 'user.deleted').length, 0);
  });

  it('answers 404 for a user that does not exist, or an id that is not a number', async () => {
    for (const url of ['/admin/users/999999/edit', '/admin/users/abc/edit', '/admin/users/999999/delete', '/admin/users/-1/edit']) {
      assert.equal((await client.get(url)).statusCode, 404, url);
    }
    assert.equal((await client.post('/admin/users/999999/delete')).statusCode, 404);
  });
});
