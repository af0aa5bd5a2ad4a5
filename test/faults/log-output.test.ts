// The request log of the real process (test/load/server-process.ts): lines are buffered
// (src/app.ts, logDestination) yet reach stdout within about a second when traffic is light, and
// none is lost when the process stops on SIGTERM; every line is one whole JSON object.
import assert from 'node:assert/strict';
import { setTimeout as sleep } from 'node:timers/promises';
import { after, before, describe, it } from 'node:test';
import { onPostgres } from '../helpers.js';
import { createSharedDatabase, startServerProcess, type ServerProcess, type SharedDatabase } from '../load/server-process.js';

type Line = { msg?: string; path?: string; status?: number; url?: string };

function lines(output: string): Line[] {
  return output
    .split('\n')
    .filter((line) => line.startsWith('{'))
    .map((line) => JSON.parse(line) as Line);
}

const settingsLines = (output: string) => lines(output).filter((line) => line.msg === 'request' && line.path === '/api/settings');

describe(`log lines of the server process (${onPostgres ? 'PostgreSQL' : 'SQLite file'})`, () => {
  let database: SharedDatabase;
  let server: ServerProcess;

  before(async () => {
    database = await createSharedDatabase();
    server = await startServerProcess({ DATABASE_URL: database.url, DATA_DIR: database.dataDir, LOG_LEVEL: 'info' });
  });
  after(async () => {
    await server?.stop();
    await database?.drop();
  });

  it('names the address to open, APP_URL, once at the start', async () => {
    // The socket is 127.0.0.1; the address for a browser is APP_URL (passkeys need a host name).
    // Lines reach stdout within about a second (the next test), so the line may still be on its way.
    const opened = () => lines(server.output()).filter((line) => line.msg?.startsWith('open ') === true);
    const deadline = Date.now() + 3000;
    while (opened().length === 0 && Date.now() < deadline) await sleep(50);
    assert.deepEqual(opened().map((line) => line.url), [server.url]);
  });

  it('writes a few lines out within about a second, though they fill no block', async () => {
    for (let i = 0; i < 3; i += 1) assert.equal((await fetch(`${server.url}/api/settings`)).status, 200);
    const deadline = Date.now() + 3000;
    while (settingsLines(server.output()).length < 3 && Date.now() < deadline) await sleep(50);
    assert.equal(settingsLines(server.output()).length, 3);
  });

  it('loses no line when stopped by SIGTERM right after answering', async () => {
    for (let i = 0; i < 200; i += 1) assert.equal((await fetch(`${server.url}/api/settings`)).status, 200);
    assert.equal(await server.stop(), 0);
    assert.equal(settingsLines(server.output()).length, 203);
    assert.ok(lines(server.output()).some((line) => line.msg === 'shutting down'));
  });
});
