// kill -9 in the middle of a write load: after a restart the database opens cleanly (SQLite:
// PRAGMA integrity_check = ok) and every write that was answered 2xx is there. The real process
// on a SQLite file (or the PostgreSQL schema of the PostgreSQL run).
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import SQLite from 'better-sqlite3';
import { TokenService } from '../../src/modules/tokens/tokens.service.js';
import { onPostgres } from '../helpers.js';
import { createSharedDatabase, seedUsers, startServerProcess, type SeededUser, type ServerProcess, type SharedDatabase } from '../load/server-process.js';

const WRITERS = 16;
const ISSUERS = 4;
// The process is killed once this many writes have been acknowledged: a count, not a time.
const KILL_AFTER_WRITES = 200;

type Writer = { user: SeededUser; token: string; acked: string | null; pending: string | null; count: number };
type Issuer = { user: SeededUser; tokens: string[] };

describe(`kill -9 during a write load (${onPostgres ? 'PostgreSQL' : 'SQLite file'})`, () => {
  let database: SharedDatabase;
  let server: ServerProcess;
  let restarted: ServerProcess | null = null;

  before(async () => {
    database = await createSharedDatabase();
    server = await startServerProcess({ DATABASE_URL: database.url, DATA_DIR: database.dataDir });
  });
  after(async () => {
    await server?.stop();
    await restarted?.stop();
    await database?.drop();
  });

  it('reopens cleanly and keeps every write that was answered 2xx', { timeout: 120_000 }, async () => {
    const users = await seedUsers(database.db, WRITERS + ISSUERS);
    const writers: Writer[] = [];
    // The writers' tokens come from the service itself (the argon2 work of issuing is not what is tested here).
    const tokenService = new TokenService(database.db, { tokenExpirationMinutes: null, tokenPrefix: '' });
    for (const user of users.slice(0, WRITERS)) {
      writers.push({ user, token: (await tokenService.issue(user.id, 'kill-9 writer')).plaintext, acked: null, pending: null, count: 0 });
    }
    const issuers: Issuer[] = users.slice(WRITERS).map((user) => ({ user, tokens: [] }));

    let acked = 0;
    let killed = false;
    let killedAt!: () => void;
    const killSignal = new Promise<void>((resolve) => (killedAt = resolve));
    const kill = () => {
      if (killed) return;
      killed = true;
      server.child.kill('SIGKILL');
      killedAt();
    };

    const write = async (writer: Writer) => {
      while (!killed) {
        const name = `Kill ${writer.user.id} #${++writer.count}`;
        writer.pending = name;
        const response = await fetch(`${server.url}/api/user`, {
          method: 'PUT',
          headers: { authorization: `Bearer ${writer.token}`, 'content-type': 'application/json', accept: 'application/json' },
          body: JSON.stringify({ name }),
        }).catch(() => null);
        if (response === null) return;
        await response.arrayBuffer().catch(() => null);
        if (response.status >= 200 && response.status < 300) {
          writer.acked = name;
          writer.pending = null;
          if (++acked >= KILL_AFTER_WRITES) kill();
        }
      }
    };
    const issue = async (issuer: Issuer) => {
      while (!killed) {
        const response = await fetch(`${server.url}/api/tokens`, {
          method: 'POST',
          headers: { 'content-type': 'application/json', accept: 'application/json' },
          body: JSON.stringify({ email: issuer.user.email, password: issuer.user.password, device_name: 'kill-9' }),
        }).catch(() => null);
        if (response === null) return;
        const body = (await response.json().catch(() => ({}))) as { token?: string };
        if (response.status === 200 && body.token !== undefined) issuer.tokens.push(body.token);
      }
    };
    const load = Promise.all([...writers.map(write), ...issuers.map(issue)]);
    await killSignal;
    await load;
    assert.equal(await server.exited, 'SIGKILL');

    // Restart on the same database: migrations run, the service answers.
    restarted = await startServerProcess({ DATABASE_URL: database.url, DATA_DIR: database.dataDir });
    let integrity = 'n/a (PostgreSQL)';
    if (!onPostgres) {
      const file = new SQLite(database.url.replace(/^sqlite:/, ''), { readonly: true });
      integrity = (file.pragma('integrity_check', { simple: true }) as string) ?? '';
      file.close();
      assert.equal(integrity, 'ok');
    }

    const rows = await database.db.kysely.selectFrom('users').select(['id', 'name']).execute();
    const names = new Map(rows.map((row) => [row.id, row.name]));
    // The last acknowledged name, or the one in flight at the kill (it may have committed).
    const lost = writers.filter((w) => w.acked !== null && names.get(w.user.id) !== w.acked && names.get(w.user.id) !== w.pending);
    const tokens = issuers.flatMap((issuer) => issuer.tokens.map((token) => ({ token, userId: issuer.user.id })));
    const dead: string[] = [];
    for (const { token, userId } of tokens) {
      const response = await fetch(`${restarted.url}/api/user`, { headers: { authorization: `Bearer ${token}`, accept: 'application/json' } });
      const body = (await response.json()) as { id?: number };
      if (response.status !== 200 || body.id !== userId) dead.push(`${userId}: ${response.status}`);
    }
    console.log(
      `FIGURES kill9: db=${onPostgres ? 'postgres' : 'sqlite'} writes_acked=${acked} tokens_acked=${tokens.length} killed_with_writes_in_flight=${writers.filter((w) => w.pending !== null).length} ` +
        `integrity_check=${integrity} writes_lost=${lost.length} tokens_lost=${dead.length}`,
    );
    assert.deepEqual(lost.map((w) => `${w.user.id}: ${names.get(w.user.id)} != ${w.acked}`), []);
    assert.deepEqual(dead, []);
    assert.ok(tokens.length > 0, 'some tokens were issued before the kill');
  });
});
