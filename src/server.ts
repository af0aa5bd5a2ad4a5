// Process entry: configuration → migrations → app → listen; SIGTERM/SIGINT close gracefully
// (stop accepting, finish requests in flight, close the database, exit 0).
import { buildApp } from './app.js';
import { ConfigError, loadConfig, readEnv } from './config.js';
import { connect } from './db/connect.js';
import { migrateToLatest } from './db/migrator.js';

async function main(): Promise<void> {
  const config = loadConfig(readEnv());
  // Migrations on a connection of their own, without the request timeouts.
  const migrations = connect(config.databaseUrl, { requestTimeouts: false });
  try {
    await migrateToLatest(migrations);
  } finally {
    await migrations.close();
  }
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

  await app.listen({ host: config.host, port: config.port });
}

main().catch((error: unknown) => {
  if (error instanceof ConfigError) {
    console.error(`Configuration error: ${error.message}`);
  } else {
    console.error(error);
  }
  process.exit(1);
});
