// Child process of test/unit/log-destination.test.ts: writes LINES log lines of about 300 bytes
// to stdout through a LogDestination (`shared` when SHARED=1), as fast as it can, then closes.
import { LogDestination } from '../../src/perf/log-destination.js';

const id = process.env.WRITER ?? '?';
const lines = Number(process.env.LINES ?? 20_000);
const destination = new LogDestination({ fd: 1, shared: process.env.SHARED === '1' });
const padding = 'x'.repeat(250);
for (let seq = 0; seq < lines; seq += 1) {
  destination.write(`${JSON.stringify({ writer: id, seq, padding })}\n`);
  // Let the writes run now and then, as a serving process does between requests.
  if (seq % 500 === 0) await new Promise((resolve) => setImmediate(resolve));
}
await destination.close(10_000);
