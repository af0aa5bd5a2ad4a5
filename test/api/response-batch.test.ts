// Responses finished in one event-loop turn are written together at its end
// (src/perf/response-batch.ts), on a real server and real sockets: requests written on several
// connections in one go reach the server in one poll of its event loop.
import assert from 'node:assert/strict';
import { connect, type Socket } from 'node:net';
import { after, before, describe, it } from 'node:test';
import Fastify, { type FastifyInstance } from 'fastify';
import { buildApp } from '../../src/app.js';
import { responseBatchPlugin } from '../../src/perf/response-batch.js';
import { createTestDatabase, testConfig, type TestDatabase } from '../helpers.js';

/** The order in which the server handled and finished sending each numbered request. */
function recordTurns(app: FastifyInstance, events: string[]): void {
  app.get<{ Params: { n: string } }>('/api/__turn/:n', { config: { auth: 'public' } }, async (request) => {
    events.push(`handled ${request.params.n}`);
    return { n: Number(request.params.n) };
  });
  app.addHook('onResponse', (request, _reply, done) => {
    const n = /\/api\/__turn\/(\d+)/.exec(request.url)?.[1];
    if (n !== undefined) events.push(`sent ${n}`);
    done();
  });
}

/** `count` connections, each accepted by the server (so that their requests arrive in one poll). */
async function openSockets(app: FastifyInstance, count: number): Promise<Socket[]> {
  const address = app.server.address();
  const port = typeof address === 'object' && address !== null ? address.port : 0;
  const before = await connections(app);
  const sockets = await Promise.all(
    Array.from({ length: count }, () => new Promise<Socket>((resolve, reject) => {
      const socket = connect(port, '127.0.0.1', () => resolve(socket));
      socket.on('error', reject);
    })),
  );
  while ((await connections(app)) < before + count) await new Promise((resolve) => setTimeout(resolve, 5));
  return sockets;
}

function connections(app: FastifyInstance): Promise<number> {
  return new Promise((resolve, reject) => app.server.getConnections((error, count) => (error ? reject(error) : resolve(count))));
}

/** Writes `GET path` on every socket in one synchronous run, then waits for each full response. */
async function requestAtOnce(sockets: Socket[], paths: string[]): Promise<string[]> {
  const answers = sockets.map(
    (socket) =>
      new Promise<string>((resolve) => {
        let text = '';
        const onData = (chunk: Buffer) => {
          text += chunk.toString('utf8');
          const [head, body] = text.split('\r\n\r\n');
          const length = Number(/content-length: (\d+)/i.exec(head ?? '')?.[1] ?? NaN);
          if (body !== undefined && body.length >= length) {
            socket.off('data', onData);
            resolve(text);
          }
        };
        socket.on('data', onData);
      }),
  );
  sockets.forEach((socket, i) => socket.write(`GET ${paths[i]} HTTP/1.1\r\nHost: 127.0.0.1\r\nAccept: application/json\r\n\r\n`));
  return Promise.all(answers);
}

describe('responses written at the end of the event-loop turn', () => {
  let database: TestDatabase;
  let app: FastifyInstance;
  const events: string[] = [];

  before(async () => {
    database = await createTestDatabase();
    app = await buildApp(testConfig(), { db: database.db });
    recordTurns(app, events);
    await app.listen({ host: '127.0.0.1', port: 0 });
  });
  after(async () => {
    await app.close();
    await database.drop();
  });

  it('handles every request of a turn before it writes any of their answers, then answers each', async () => {
    const sockets = await openSockets(app, 3);
    try {
      events.length = 0;
      const answers = await requestAtOnce(sockets, ['/api/__turn/1', '/api/__turn/2', '/api/__turn/3']);
      assert.deepEqual(events.slice(0, 3).sort(), ['handled 1', 'handled 2', 'handled 3'], `order: ${events.join(', ')}`);
      assert.deepEqual(events.slice(3).sort(), ['sent 1', 'sent 2', 'sent 3']);
      answers.forEach((answer, i) => {
        assert.match(answer, /^HTTP\/1\.1 200 OK/);
        assert.match(answer, new RegExp(`\\{"n":${i + 1}\\}$`));
      });
    } finally {
      for (const socket of sockets) socket.destroy();
    }
  });

  it('answers requests pipelined on one connection in their order', async () => {
    const [socket] = await openSockets(app, 1);
    assert.ok(socket !== undefined);
    try {
      const text = await new Promise<string>((resolve) => {
        let received = '';
        socket.on('data', (chunk: Buffer) => {
          received += chunk.toString('utf8');
          if ((received.match(/\{"n":\d+\}/g) ?? []).length === 3) resolve(received);
        });
        socket.write(['4', '5', '6'].map((n) => `GET /api/__turn/${n} HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n`).join(''));
      });
      assert.deepEqual(text.match(/\{"n":\d+\}/g), ['{"n":4}', '{"n":5}', '{"n":6}']);
    } finally {
      socket.destroy();
    }
  });
});

describe('a batch that reaches its limit', () => {
  it('is written at once, before the rest of the turn is handled', async () => {
    const app = Fastify();
    await app.register(responseBatchPlugin, { maxBatch: 2 });
    const events: string[] = [];
    recordTurns(app, events);
    await app.listen({ host: '127.0.0.1', port: 0 });
    const sockets = await openSockets(app, 3);
    try {
      await requestAtOnce(sockets, ['/api/__turn/1', '/api/__turn/2', '/api/__turn/3']);
      assert.deepEqual(events, ['handled 1', 'handled 2', 'sent 1', 'sent 2', 'handled 3', 'sent 3']);
    } finally {
      for (const socket of sockets) socket.destroy();
      await app.close();
    }
  });
});
