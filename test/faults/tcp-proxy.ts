// A TCP proxy on loopback that the fault suite puts between the service and PostgreSQL, so the
// database can "stop" or "stall" without touching the shared server:
// - down(): existing connections are cut and the port refuses new ones (a stopped server);
// - stall(): bytes are held in both directions and new connections get no answer (a server or
//   network that stopped answering); up() delivers what was held, as TCP would on recovery.
import { createConnection, createServer, type Server, type Socket } from 'node:net';

type Pair = { client: Socket; upstream: Socket | null; toUpstream: Buffer[]; toClient: Buffer[] };

export class TcpProxy {
  private server: Server | null = null;
  private readonly pairs = new Set<Pair>();
  private mode: 'up' | 'down' | 'stall' = 'up';
  port = 0;

  constructor(
    private readonly targetHost: string,
    private readonly targetPort: number,
  ) {}

  async start(): Promise<number> {
    await this.listen(0);
    return this.port;
  }

  /** Cuts every connection and closes the port: clients get ECONNREFUSED. */
  async down(): Promise<void> {
    this.mode = 'down';
    const server = this.server;
    this.server = null;
    for (const pair of this.pairs) {
      pair.client.destroy();
      pair.upstream?.destroy();
    }
    this.pairs.clear();
    if (server !== null) await new Promise<void>((resolve) => server.close(() => resolve()));
  }

  /** Holds every byte from now on; connections stay open and new ones are accepted but unanswered. */
  stall(): void {
    this.mode = 'stall';
  }

  /** Back to normal: listens again after down(), delivers what was held after stall(). */
  async up(): Promise<void> {
    const previous = this.mode;
    this.mode = 'up';
    if (this.server === null) await this.listen(this.port);
    if (previous === 'stall') {
      for (const pair of this.pairs) {
        if (pair.upstream === null) this.connectUpstream(pair);
        else this.flush(pair);
      }
    }
  }

  async close(): Promise<void> {
    await this.down();
  }

  private listen(port: number): Promise<void> {
    const server = createServer((client) => this.accept(client));
    this.server = server;
    return new Promise((resolve, reject) => {
      server.once('error', reject);
      server.listen(port, '127.0.0.1', () => {
        const address = server.address();
        if (typeof address === 'object' && address !== null) this.port = address.port;
        resolve();
      });
    });
  }

  private accept(client: Socket): void {
    const pair: Pair = { client, upstream: null, toUpstream: [], toClient: [] };
    this.pairs.add(pair);
    client.on('data', (chunk: Buffer) => {
      if (this.mode === 'up' && pair.upstream !== null) pair.upstream.write(chunk);
      else pair.toUpstream.push(chunk);
    });
    const end = () => {
      this.pairs.delete(pair);
      client.destroy();
      pair.upstream?.destroy();
    };
    client.on('error', end);
    client.on('close', end);
    if (this.mode === 'up') this.connectUpstream(pair);
  }

  private connectUpstream(pair: Pair): void {
    if (pair.client.destroyed) return;
    const upstream = createConnection({ host: this.targetHost, port: this.targetPort });
    pair.upstream = upstream;
    upstream.on('connect', () => this.flush(pair));
    upstream.on('data', (chunk: Buffer) => {
      if (this.mode === 'up') pair.client.write(chunk);
      else pair.toClient.push(chunk);
    });
    const end = () => {
      this.pairs.delete(pair);
      upstream.destroy();
      pair.client.destroy();
    };
    upstream.on('error', end);
    upstream.on('close', end);
  }

  private flush(pair: Pair): void {
    if (pair.upstream === null || pair.upstream.connecting) return;
    for (const chunk of pair.toUpstream.splice(0)) pair.upstream.write(chunk);
    for (const chunk of pair.toClient.splice(0)) pair.client.write(chunk);
  }
}
