// Preloaded (`--import`) into the service processes the tests start (test/load/server-process.ts):
// when an HTTP server of the process starts listening, the parent hears of it over IPC, with the
// address. The parent then knows that the server answering on the port it chose is its own child,
// not another process that took the port between the choice and the child's listen.
import cluster from 'node:cluster';
import net from 'node:net';

const listen = net.Server.prototype.listen;
net.Server.prototype.listen = function (...args) {
  this.once('listening', () => process.send?.({ type: 'listening', address: this.address() }));
  return listen.apply(this, args);
};
// The IPC channel must not keep the process alive on its own (SIGTERM ends it as in production).
// A cluster worker's channel is its primary's, and keeps it alive while the primary answers its
// listen, as in production.
if (!cluster.isWorker) process.channel?.unref();
