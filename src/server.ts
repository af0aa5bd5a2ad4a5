// Process entry: configuration → migrations → app → listen; SIGTERM/SIGINT close gracefully
// (stop accepting, finish requests in flight, close the database, exit 0).
import cluster from 'node:cluster';
import { buildApp } from './app.js';
import { drainWhenPrimaryGone, runPrimary } from './cluster.js';
import type { Config } from './config.js';
import { connect } from './db/connect.js';
import { prepareStart, start } from './startup-errors.js';

async function main(config: Config): Promise<void> {
  // The database, the migrations and Redis are checked (src/startup-errors.ts); with several
  // workers the primary does it once before forking (src/cluster.ts), and the workers skip it.
  if (cluster.isPrimary) await prepareStart(config);
  if (cluster.isPrimary && config.webConcurrency > 1) return runPrimary(config);
  const db = connect(config.databaseUrl);
  const app = await buildApp(config, { db });
  app.addHook('onClose', async () => db.close());

  let closing = false;
  const shutdown = (signal: string) => {
    if (closing) return;
    closing = true;
    app.log.info({ signal }, 'shutting down');
    // A request that never ends must not keep the process alive forever.
    const force = setTimeout(() => process.exit(1), 10_000);
    force.unref();
    // A kept-alive connection turns idle when its last response is sent; close() alone would
    // wait for the client's keep-alive to expire, so idle ones are closed as they appear.
    setInterval(() => app.server.closeIdleConnections(), 100).unref();
    app.close().then(
      () => process.exit(0),
      (error: unknown) => {
        app.log.error({ err: error }, 'shutdown failed');
        process.exit(1);
      },
    );
  };
  process.on('SIGTERM', () => shutdown('SIGTERM'));
  process.on('SIGINT', () => shutdown('SIGINT'));
  drainWhenPrimaryGone(shutdown);

  await app.listen({ host: config.host, port: config.port });
  // Fastify names the socket (http://127.0.0.1:3000); the address to open is APP_URL, the one
  // links in mails, cookies and passkeys are made for (http://localhost:3000 by default). Said
  // once: by the only process, or by the first of several workers.
  if (cluster.isPrimary || cluster.worker?.id === 1) app.log.info({ url: config.appUrl }, `open ${config.appUrl}`);
}

// A failure before the service listens is one line naming its cause (src/startup-errors.ts).
void start(main);
