// The service under load, in its own process (so the load generator does not share its event
// loop): buildApp + listen on 127.0.0.1, port 0. Reports its port to the parent over IPC, and on
// request measures the raw argon2id verify rate in this same process.
import { buildApp } from '../src/app.js';
import { loadConfig } from '../src/config.js';
import { Session } from 'node:inspector/promises';
import { verify } from '@node-rs/argon2';
import { hashPassword, verifyPassword } from '../src/modules/passwords/hasher.js';

export type ServerMessage =
  | { type: 'ready'; port: number }
  | { type: 'argon2'; perSecond: number; libraryPerSecond: number }
  | { type: 'profiling' }
  | { type: 'profile'; profile: unknown };
export type ParentMessage = { type: 'argon2'; concurrency: number; seconds: number } | { type: 'profile-start' } | { type: 'profile-stop' };

// The parent sets the environment: this is the process's configuration, as for src/server.ts.
const app = await buildApp(loadConfig(process.env));
await app.listen({ host: '127.0.0.1', port: 0 });
const address = app.server.address();
const port = typeof address === 'object' && address !== null ? address.port : 0;

// `check` is the service's own verifyPassword (the baseline of the login target: whatever the
// service does around argon2 besides hashing is what the ratio measures), or the library's
// verify called directly, for comparison.
async function argon2Rate(concurrency: number, seconds: number, check: (stored: string, password: string) => Promise<boolean>): Promise<number> {
  const stored = await hashPassword('bench-password-1');
  const deadline = Date.now() + seconds * 1000;
  let done = 0;
  const worker = async () => {
    while (Date.now() < deadline) {
      if (!(await check(stored, 'bench-password-1'))) throw new Error('argon2 verify failed');
      done += 1;
    }
  };
  const started = Date.now();
  await Promise.all(Array.from({ length: concurrency }, worker));
  return done / ((Date.now() - started) / 1000);
}

// The CPU profile of bench/profile.ts covers the measured load only (not start-up or warm-up).
const inspector = new Session();

process.on('message', (message: ParentMessage) => {
  if (message.type === 'profile-start') {
    inspector.connect();
    void inspector
      .post('Profiler.enable')
      .then(() => inspector.post('Profiler.start'))
      .then(() => process.send?.({ type: 'profiling' } satisfies ServerMessage));
  }
  if (message.type === 'profile-stop') {
    void inspector.post('Profiler.stop').then(({ profile }) => process.send?.({ type: 'profile', profile } satisfies ServerMessage));
  }
  if (message.type === 'argon2') {
    void (async () => {
      const perSecond = await argon2Rate(message.concurrency, message.seconds, verifyPassword);
      const libraryPerSecond = await argon2Rate(message.concurrency, message.seconds, (stored, password) => verify(stored, password));
      process.send?.({ type: 'argon2', perSecond, libraryPerSecond } satisfies ServerMessage);
    })();
  }
});
process.on('SIGTERM', () => {
  void app.close().then(() => process.exit(0));
});
process.send?.({ type: 'ready', port } satisfies ServerMessage);
