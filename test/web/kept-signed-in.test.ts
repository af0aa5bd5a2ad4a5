// What every signed-in page reads, its user and (on SQLite) its session, is kept in memory while
// the database is unchanged (perf/kept-reads.ts keptUserById, keptSessionRows), and every change
// shows on the next request, on this instance and on another one sharing the database: a new
// name, a lost panel, a deleted account or an ended session signed out.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { FastifyInstance } from 'fastify';
import { createUser, twoInstances } from '../helpers.js';
import { WebClient } from '../support/client.js';
import { isLoggedIn, login, sessionIdOf } from './support.js';

describe('kept users, changed through another instance', () => {
  let a: FastifyInstance;
  let b: FastifyInstance;
  let close: () => Promise<void>;

  before(async () => {
    ({ a, b, close } = await twoInstances());
  });
  after(() => close());

  it('shows a new name on the next page', async () => {
    const user = await createUser(a, { name: 'Before Rename', email: 'kept-rename@example.com' });
    const client = new WebClient(a);
    await login(client, user.email, user.plainPassword);
    assert.match((await client.get('/profile')).body, /value="Before Rename"/);
    assert.match((await client.get('/profile')).body, /value="Before Rename"/);
    const found = await b.services.users.findById(user.id);
    await b.services.auth.updateProfile(found!, { name: 'After Rename' }, 'en', 'password-confirmed');
    assert.match((await client.get('/profile')).body, /value="After Rename"/);
  });

  it('takes the panel from an administrator demoted elsewhere at once', async () => {
    const admin = await createUser(a, { email: 'kept-admin@example.com', admin: true });
    const client = new WebClient(a);
    await client.adminLogin(admin.email, admin.plainPassword);
    assert.equal((await client.get('/admin')).statusCode, 200);
    await b.db.kysely.updateTable('users').set({ is_admin: 0 }).where('id', '=', admin.id).execute();
    assert.equal((await client.get('/admin')).statusCode, 403);
  });

  it('signs out a user deleted elsewhere', async () => {
    const user = await createUser(a, { email: 'kept-deleted@example.com' });
    const client = new WebClient(a);
    await login(client, user.email, user.plainPassword);
    assert.equal(await isLoggedIn(client), true);
    await b.db.kysely.deleteFrom('users').where('id', '=', user.id).execute();
    assert.equal(await isLoggedIn(client), false);
  });

  it('signs out a session ended through the other instance, and keeps the others', async () => {
    const user = await createUser(a, { email: 'kept-session@example.com' });
    const here = new WebClient(a);
    const there = new WebClient(a);
    await login(here, user.email, user.plainPassword);
    await login(there, user.email, user.plainPassword);
    assert.equal(await isLoggedIn(here), true);
    assert.equal(await isLoggedIn(here), true);
    await b.services.sessions.destroyForUser(user.id, sessionIdOf(there)!);
    assert.equal(await isLoggedIn(here), false);
    assert.equal(await isLoggedIn(there), true);
  });

  it('hands out a kept user no one can change in memory', async () => {
    const user = await createUser(a, { email: 'kept-frozen@example.com' });
    const kept = await a.services.users.findById(user.id);
    assert.ok(kept !== undefined && Object.isFrozen(kept));
  });
});
