// PostgreSQL: the reads of pages shown at every request (statement()) and the looks at the
// change counters, on one connection of their own in node-postgres' pipeline mode.
//
// Through the pool each read took a client (pg-pool's acquire and release, their events and
// callbacks) and was one round trip on that client's socket: on /security, six reads at once
// were six clients, six writes and six reads of six sockets, and pg and pg-pool were two fifths
// of the page's CPU. Pipelined, a read is written behind the others without waiting for their
// answers (each is its own Parse/Bind/Execute/Sync: one failing does not fail the next), so
// the reads of every request in flight share one socket, and its writes and reads. PostgreSQL
// runs them one after another on the one backend: only short reads by index come here; writes,
// transactions and the panel's filtered lists stay on the pool.
//
// A connection that fails (the server gone, a query past its query_timeout, which destroys a
// pipelined connection) is dropped: the reads on it fail, as they would on a pooled client, and
// the next read opens a new one. It is dropped at its first failed read as well as at its
// 'error' or 'end' event: a read sent before the event was handled (a timer's callback runs
// before the loop reads the socket's end) would otherwise meet the dead socket again.
import pg from 'pg';

/**
 * Whether a failed read says its connection is unusable: anything but PostgreSQL's answer to
 * that query (a DatabaseError of severity ERROR), e.g. ECONNRESET, "Connection terminated
 * unexpectedly", a read timeout, or a FATAL such as an administrator's termination.
 */
function lostConnection(error: unknown): boolean {
  return !(error instanceof pg.DatabaseError) || error.severity === 'FATAL' || error.severity === 'PANIC';
}

export type ReadQuery = { name: string; text: string; values?: unknown[]; rowMode?: 'array' };

export class PipelinedReads {
  private client: pg.Client | null = null;
  private opening: Promise<pg.Client> | null = null;
  private closed = false;

  /** `config`: the pool's own connection settings (timeouts, types, search_path). */
  constructor(private readonly config: pg.ClientConfig) {}

  query<Row extends pg.QueryResultRow>(query: ReadQuery): Promise<pg.QueryResult<Row>> {
    const run = (client: pg.Client) =>
      client.query<Row>(query).catch((error: unknown) => {
        if (lostConnection(error)) this.drop(client);
        throw error;
      });
    const client = this.client;
    if (client !== null) return run(client);
    return this.open().then(run);
  }

  private drop(client: pg.Client): void {
    if (this.client !== client) return;
    this.client = null;
    client.end().catch(() => {});
  }

  private open(): Promise<pg.Client> {
    if (this.closed) return Promise.reject(new Error('The database connection is closed.'));
    this.opening ??= (async () => {
      const client = new pg.Client({ ...this.config, pipeline: true } as pg.ClientConfig);
      // A lost connection emits 'error' (and 'end'); without a listener that would crash the process.
      const drop = () => {
        if (this.client === client) this.client = null;
      };
      client.on('error', drop);
      client.on('end', drop);
      try {
        await client.connect();
      } catch (error) {
        this.opening = null;
        client.end().catch(() => {});
        throw error;
      }
      this.opening = null;
      if (this.closed) {
        await client.end().catch(() => {});
        throw new Error('The database connection is closed.');
      }
      this.client = client;
      return client;
    })();
    return this.opening;
  }

  async close(): Promise<void> {
    this.closed = true;
    const client = this.client ?? (await this.opening?.catch(() => null)) ?? null;
    this.client = null;
    if (client !== null) await client.end().catch(() => {});
  }
}
