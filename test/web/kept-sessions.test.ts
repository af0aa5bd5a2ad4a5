// A signed-in page's session row is kept in memory on both databases (perf/kept-reads.ts
// keptSessionRows; on PostgreSQL through session_version, migration 2026_11_29_000001), and a
// session ended anywhere is honoured by the next request of every instance: a logout here signs
// out the same cookie there, a sign-out everywhere ends the copies kept by the other instance.
// On PostgreSQL a signed-in page whose rows did not change reads none: its one round trip is the
// look at the change counters, which it shares with its settings and its user.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { FastifyInstance } from 'fastify';
import { createUser, twoInstances } from '../helpers.js';
import { WebClient } from '../support/client.js';
import { postgresTraffic } from '../support/query-plan.js';
import { needsPostgres, sqliteOnly } from '../support/services.js';
import { isLoggedIn, login } from './support.js';

/** A client of `app` carrying the same cookies as `client` (the same browser behind a balancer). */
const sameBrowser = (app: FastifyInstance, client: WebClient) => {
  const copy = new WebClient(app);
  for (const [name, value] of client.cookies) copy.cookies.set(name, value);
  return copy;
};

describe('kept sessions, ended through another instance', () => {
  let a: FastifyInstance;
  let b: FastifyInstance;
  let close: () => Promise<void>;

  before(async () => {
    ({ a, b, close } = await twoInstances());
  });
  after(() => close());

  it('signs out at once, there, a session logged out here', async () => {
    const user = await createUser(a, { email: 'kept-logout@example.com' });
    const here = new WebClient(a);
    await login(here, user.email, user.plainPassword);
    const there = sameBrowser(b, here);
    assert.equal(await isLoggedIn(there), true);
    assert.equal(await isLoggedIn(there), true);
    await here.get('/dashboard');
    assert.equal((await here.post('/logout')).statusCode, 303);
    assert.equal(await isLoggedIn(there), false);
  });

  it('signs out at once, there, the other sessions of a user who signs out everywhere here', async () => {
    const user = await createUser(a, { email: 'kept-everywhere@example.com' });
    const here = new WebClient(a);
    const other = new WebClient(a);
    await login(here, user.email, user.plainPassword);
    await login(other, user.email, user.plainPassword);
    const there = sameBrowser(b, other);
    assert.equal(await isLoggedIn(there), true);
    assert.equal(await isLoggedIn(there), true);
    await a.services.sessions.destroyForUser(user.id);
    assert.equal(await isLoggedIn(there), false);
    assert.equal(await isLoggedIn(here), false);
  });
});

describe('a signed-in page on PostgreSQL, nothing changed', { skip: needsPostgres }, () => {
  let a: FastifyInstance;
  let b: FastifyInstance;
  let close: () => Promise<void>;

  before(async () => {
    ({ a, b, close } = await twoInstances());
  });
  after(() => close());

  it('reads no row of its own: its one round trip is the look at the change counters', async () => {
    const user = await createUser(a, { email: 'kept-looks@example.com' });
    const client = new WebClient(a);
    await login(client, user.email, user.plainPassword);
    // The first page after the sign-in saves the session once more (what the sign-in flashed is taken).
    assert.equal(await isLoggedIn(client), true);
    assert.equal(await isLoggedIn(client), true);
    let isIn = false;
    const { sent, acquired } = await postgresTraffic(a.db, async () => (isIn = await isLoggedIn(client)));
    assert.equal(isIn, true);
    assert.deepEqual(sent, ['data_version'], 'nothing but the look reached the database');
    assert.equal(acquired, 0, 'no client was taken from the pool');
    // And a change made through the other instance is still seen by the next request.
    await b.db.kysely.deleteFrom('sessions').where('user_id', '=', user.id).execute();
    assert.equal(await isLoggedIn(client), false);
  });
});

describe('a signed-in page on SQLite, nothing changed', { skip: sqliteOnly('the commit watch of a SQLite file') }, () => {
  let a: FastifyInstance;
  let b: FastifyInstance;
  let close: () => Promise<void>;

  before(async () => {
    ({ a, b, close } = await twoInstances());
  });
  after(() => close());

  it("reads the other processes' commits once a request (perf/request-looks.ts), and sees one made before the next", async () => {
    const user = await createUser(a, { email: 'kept-watch@example.com' });
    const client = new WebClient(a);
    await login(client, user.email, user.plainPassword);
    assert.equal(await isLoggedIn(client), true);
    const watch = a.db.commits!;
    const current = watch.current.bind(watch);
    let reads = 0;
    watch.current = () => {
      reads += 1;
      return current();
    };
    try {
      // The session, the user and the settings are kept reads, each with its look.
      assert.equal((await client.get('/security')).statusCode, 200);
      assert.equal(reads, 1, 'one read of the commit watch for the page');
      // A commit of the other instance, before the next request: that request sees it.
      await b.db.kysely.deleteFrom('sessions').where('user_id', '=', user.id).execute();
      assert.equal(await isLoggedIn(client), false);
    } finally {
      watch.current = current;
    }
  });
});
