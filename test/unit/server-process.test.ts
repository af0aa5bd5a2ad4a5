// The harness that starts the service as a child process (test/load/server-process.ts) must only
// ever hand a test its own child: a port chosen free can be taken before the child listens.
import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import { describe, it } from 'node:test';
import { createSharedDatabase, startServerProcess } from '../load/server-process.js';

describe('startServerProcess', () => {
  it('refuses a port another process answers on, even with 200 on /up', async () => {
    const impostor = createServer((_request, response) => response.writeHead(200, { 'content-type': 'application/json' }).end('{"status":"ok"}'));
    await new Promise<void>((resolve) => impostor.listen(0, '127.0.0.1', resolve));
    const address = impostor.address();
    const port = typeof address === 'object' && address !== null ? address.port : 0;
    const database = await createSharedDatabase();
    try {
      await assert.rejects(startServerProcess({ DATABASE_URL: database.url, DATA_DIR: database.dataDir }, { port }), /port \d+ taken: PORT \d+ is already in use/);
    } finally {
      impostor.close();
      await database.drop();
    }
  });

  it('starts the service on a port of its own and serves from it', async () => {
    const database = await createSharedDatabase();
    try {
      const server = await startServerProcess({ DATABASE_URL: database.url, DATA_DIR: database.dataDir });
      try {
        const response = await fetch(`${server.url}/up`);
        assert.deepEqual(await response.json(), { status: 'ok', database: true, rate_limit_store: { kind: 'memory', ok: true } });
      } finally {
        assert.equal(await server.stop(), 0);
      }
    } finally {
      await database.drop();
    }
  });
});
