// SIGTERM while requests are in flight: the service stops accepting connections, finishes every
// request it has (token issues, slow on purpose: argon2id), writes them all, and exits 0 within
// 10 s. The real process (`node --import tsx src/server.ts`) on the test database.
import assert from 'node:assert/strict';
import { connect as tcpConnect } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { onPostgres } from '../helpers.js';
import { createSharedDatabase, seedUsers, startServerProcess, type SeededUser, type ServerProcess, type SharedDatabase } from '../load/server-process.js';

const IN_FLIGHT = 30;

/** Resolves true when a new TCP connection to the port is refused. */
function refused(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = tcpConnect({ host: '127.0.0.1', port });
    socket.once('connect', () => {
      socket.destroy();
      resolve(false);
    });
    socket.once('error', () => resolve(true));
  });
}

describe(`SIGTERM with requests in flight (${onPostgres ? 'PostgreSQL' : 'SQLite file'})`, () => {
  let database: SharedDatabase;
  let server: ServerProcess;
  let user: SeededUser;

  before(async () => {
    database = await createSharedDatabase();
    [user] = (await seedUsers(database.db, 1)) as [SeededUser];
    server = await startServerProcess({ DATABASE_URL: database.url, DATA_DIR: database.dataDir });
  });
  after(async () => {
    await server?.stop();
    await database?.drop();
  });

  it('stops accepting, answers every request in flight with 200, keeps every token and exits 0 within 10 s', async () => {
    let pending = IN_FLIGHT;
    const requests = Array.from({ length: IN_FLIGHT }, (_, i) =>
      fetch(`${server.url}/api/tokens`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', accept: 'application/json' },
        body: JSON.stringify({ email: user.email, password: user.password, device_name: `in-flight-${i}` }),
      })
        .then(async (response) => ({ status: response.status, body: (await response.json()) as { token?: string } }))
        .finally(() => (pending -= 1)),
    );
    // The first answer means the server has read the requests (the event loop is free while
    // argon2 runs on the thread pool); the others are still hashing.
    await Promise.race(requests);
    const signalled = performance.now();
    server.child.kill('SIGTERM');

    let refusedWhileBusy = false;
    while (pending > 0 && server.child.exitCode === null) {
      if (await refused(server.port)) {
        refusedWhileBusy = pending > 0;
        break;
      }
      await new Promise((resolve) => setTimeout(resolve, 10));
    }

    const answers = await Promise.all(requests);
    const exit = await server.exited;
    const seconds = (performance.now() - signalled) / 1000;
    const tokens = answers.map((a) => a.body.token).filter((t): t is string => typeof t === 'string');
    const stored = await database.db.kysely.selectFrom('personal_access_tokens').select('id').where('user_id', '=', user.id).execute();
    console.log(
      `FIGURES sigterm: db=${onPostgres ? 'postgres' : 'sqlite'} in_flight=${IN_FLIGHT} answered_200=${answers.filter((a) => a.status === 200).length} ` +
        `tokens_stored=${stored.length} refused_new_connections_while_busy=${refusedWhileBusy} exit=${exit} exit_after=${seconds.toFixed(2)}s`,
    );

    assert.deepEqual(answers.map((a) => a.status), Array.from({ length: IN_FLIGHT }, () => 200));
    assert.ok(refusedWhileBusy, 'new connections are refused while requests are still being finished');
    assert.equal(exit, 0);
    assert.ok(seconds < 10, `exited after ${seconds} s`);
    // Nothing in flight was lost: every token answered is stored.
    assert.deepEqual(new Set(stored.map((row) => row.id)), new Set(tokens.map((t) => Number(t.split('|')[0]))));
  });
});
