// A redis-server of a test's own, on a port of its choosing, that the test may stop, freeze
// (SIGSTOP) and thaw: the fault tests never touch the machine's shared Redis on 6379.
import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { Redis } from 'ioredis';

/** A redis-server of this test's own: no persistence, so a restart starts empty. */
export class OwnRedis {
  private child: ChildProcess | null = null;
  constructor(readonly port: number) {}

  get url(): string {
    return `redis://127.0.0.1:${this.port}`;
  }

  async start(): Promise<void> {
    const child = spawn('redis-server', ['--port', String(this.port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'], { stdio: ['ignore', 'pipe', 'pipe'] });
    this.child = child;
    let output = '';
    await new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`redis-server did not start: ${output}`)), 10_000);
      child.stdout!.on('data', (chunk: Buffer) => {
        output += chunk.toString();
        if (output.includes('Ready to accept connections')) {
          clearTimeout(timer);
          resolve();
        }
      });
      child.once('exit', (code) => {
        clearTimeout(timer);
        reject(new Error(`redis-server exited with ${code}: ${output}`));
      });
    });
    child.stdout!.resume();
    child.stderr!.resume();
  }

  /** SIGTERM, as an operator's `systemctl stop` sends; nothing is saved (--save ""). */
  async stop(): Promise<void> {
    const child = this.child;
    this.child = null;
    if (child === null || child.exitCode !== null) return;
    child.kill('SIGCONT');
    child.kill('SIGTERM');
    await once(child, 'exit');
  }

  /** Freezes or thaws the server: connections stay open, nothing is answered meanwhile. */
  signal(signal: 'SIGSTOP' | 'SIGCONT'): void {
    this.child?.kill(signal);
  }

  get running(): boolean {
    return this.child !== null && this.child.exitCode === null;
  }

  async keys(pattern: string): Promise<string[]> {
    return this.ask((client) => client.keys(pattern));
  }

  /** Zeroes the server's command counts (CONFIG RESETSTAT). */
  async resetStats(): Promise<void> {
    await this.ask((client) => client.config('RESETSTAT'));
  }

  /**
   * How many times each command ran since the last resetStats (INFO commandstats), by name
   * (evalsha, ping…). Commands sent while the server was frozen wait in its sockets and run,
   * and are counted, once it is thawed.
   */
  async commandCalls(): Promise<Map<string, number>> {
    const info = await this.ask((client) => client.info('commandstats'));
    const calls = new Map<string, number>();
    for (const match of info.matchAll(/^cmdstat_([^:]+):calls=(\d+)/gm)) calls.set(match[1]!, Number(match[2]));
    return calls;
  }

  private async ask<T>(question: (client: Redis) => Promise<T>): Promise<T> {
    const client = new Redis(this.url, { maxRetriesPerRequest: 0, retryStrategy: () => null });
    try {
      return await question(client);
    } finally {
      client.disconnect();
    }
  }
}
