// Says when a write of this process has completed on PostgreSQL, for the looks at the change
// counters (read-cache.ts PostgresChanges): a look sent before a write was acknowledged may not
// see it, so a later kept read of the same request must not use it. The Kysely driver is wrapped:
// a connection that ran anything but a read (an insert, an update, a delete, a transaction) is
// reported once it is back in the pool, after its commit.
import type { CompiledQuery, DatabaseConnection, Dialect, Driver, QueryCompiler, QueryResult, TransactionSettings } from 'kysely';

/** True for a statement that cannot change a row: a SELECT, built or written as text. */
export function readsOnly(query: CompiledQuery): boolean {
  const kind = query.query.kind;
  return kind === 'SelectQueryNode' || (kind === 'RawNode' && /^\s*select\b/i.test(query.sql));
}

/** `dialect` whose driver calls `wrote` after each connection that wrote is released. */
export function watchWrites(dialect: Dialect, wrote: () => void): Dialect {
  return {
    createAdapter: () => dialect.createAdapter(),
    createQueryCompiler: () => dialect.createQueryCompiler(),
    createIntrospector: (db) => dialect.createIntrospector(db),
    createDriver: () => new WatchedDriver(dialect.createDriver(), wrote),
  };
}

class WatchedConnection implements DatabaseConnection {
  wrote = false;

  constructor(readonly inner: DatabaseConnection) {}

  executeQuery<R>(query: CompiledQuery): Promise<QueryResult<R>> {
    if (!readsOnly(query)) this.wrote = true;
    return this.inner.executeQuery<R>(query);
  }

  streamQuery<R>(query: CompiledQuery, chunkSize?: number): AsyncIterableIterator<QueryResult<R>> {
    if (!readsOnly(query)) this.wrote = true;
    return this.inner.streamQuery<R>(query, chunkSize);
  }
}

class WatchedDriver implements Driver {
  // One wrapper per driver connection (the pg driver keeps one per pooled client).
  private readonly connections = new WeakMap<DatabaseConnection, WatchedConnection>();

  constructor(
    private readonly inner: Driver,
    private readonly wrote: () => void,
  ) {}

  init(): Promise<void> {
    return this.inner.init();
  }

  async acquireConnection(): Promise<DatabaseConnection> {
    const inner = await this.inner.acquireConnection();
    let connection = this.connections.get(inner);
    if (connection === undefined) this.connections.set(inner, (connection = new WatchedConnection(inner)));
    return connection;
  }

  beginTransaction(connection: DatabaseConnection, settings: TransactionSettings): Promise<void> {
    return this.inner.beginTransaction(connection, settings);
  }

  commitTransaction(connection: DatabaseConnection): Promise<void> {
    return this.inner.commitTransaction(connection);
  }

  rollbackTransaction(connection: DatabaseConnection): Promise<void> {
    return this.inner.rollbackTransaction(connection);
  }

  savepoint(connection: DatabaseConnection, name: string, compile: QueryCompiler['compileQuery']): Promise<void> {
    if (this.inner.savepoint === undefined) throw new Error('savepoints are not supported');
    return this.inner.savepoint(connection, name, compile);
  }

  rollbackToSavepoint(connection: DatabaseConnection, name: string, compile: QueryCompiler['compileQuery']): Promise<void> {
    if (this.inner.rollbackToSavepoint === undefined) throw new Error('savepoints are not supported');
    return this.inner.rollbackToSavepoint(connection, name, compile);
  }

  releaseSavepoint(connection: DatabaseConnection, name: string, compile: QueryCompiler['compileQuery']): Promise<void> {
    if (this.inner.releaseSavepoint === undefined) throw new Error('savepoints are not supported');
    return this.inner.releaseSavepoint(connection, name, compile);
  }

  async releaseConnection(connection: DatabaseConnection): Promise<void> {
    const watched = connection as WatchedConnection;
    await this.inner.releaseConnection(watched.inner);
    if (watched.wrote) {
      watched.wrote = false;
      this.wrote();
    }
  }

  destroy(): Promise<void> {
    return this.inner.destroy();
  }
}
