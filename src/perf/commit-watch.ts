// Tells, without a transaction, whether another connection (another process: a second instance,
// the CLI) has committed to the SQLite database since the last look.
//
// `PRAGMA data_version` says so too, but it opens a read transaction, and on Unix that takes and
// drops a POSIX lock on the WAL index (two fcntl calls): ~1.4 µs, the largest single cost of a
// cached token check. SQLite itself learns of other connections' commits by comparing the
// WAL-index header (the first 96 bytes of the `-shm` file: two copies of a 48-byte header holding
// the commit counter, the last frame, the salts and a checksum) with the copy it saw last
// (https://www.sqlite.org/walformat.html, 2.1). This does the same with one pread (~0.6 µs): a
// commit is visible to readers only once that header is written, so a header that has not moved
// means no commit this connection could see. A read that catches the header half-written merely
// counts as a change (the caches are dropped once more than needed, never kept too long).
//
// Where the index cannot be read (an in-memory database has no other connection; a database not
// in WAL mode, or a -shm file that cannot be opened), `PRAGMA data_version` is used instead. Bytes
// that do not start like an index header (its version, 3007000) never count as "unchanged".
//
// The -shm file's descriptor must stay open for as long as the SQLite connection is: closing any
// descriptor of a file drops every POSIX lock the process holds on it, SQLite's included
// (https://www.sqlite.org/howtocorrupt.html, 2.2). `close()` is therefore called by Db.close()
// only after the connection is closed.
import { closeSync, constants, openSync, readSync, realpathSync } from 'node:fs';
import type SQLite from 'better-sqlite3';

const HEADER_BYTES = 96;
/** The header's first field, in the machine's byte order (WALINDEX_MAX_VERSION). */
const INDEX_VERSION = 3007000;

export class CommitWatch {
  private fd: number | null = null;
  private readonly seen = Buffer.alloc(HEADER_BYTES);
  private readonly read = Buffer.alloc(HEADER_BYTES);
  private version = 0;
  private dataVersion: SQLite.Statement | null = null;
  /** How commits are seen: SQLite's WAL-index header, PRAGMA data_version, or not at all (in memory). */
  readonly source: 'wal-index' | 'data_version' | 'none';

  /** `path`: the database file (null for an in-memory database). */
  constructor(
    private readonly handle: SQLite.Database,
    path: string | null,
  ) {
    if (path === null) {
      this.source = 'none';
      return;
    }
    const dataVersion = handle.prepare('PRAGMA data_version').pluck();
    if (handle.pragma('journal_mode', { simple: true }) === 'wal') {
      // A new database's index is made by its first read transaction: make sure there is one.
      dataVersion.get();
      try {
        // SQLite names the index after the database's real path (symbolic links resolved).
        this.fd = openSync(`${realpathSync(path)}-shm`, constants.O_RDONLY);
        this.source = 'wal-index';
        return;
      } catch {
        // No readable index: fall back to data_version below.
      }
    }
    this.dataVersion = dataVersion;
    this.source = 'data_version';
  }

  /**
   * A number that grows whenever another connection has committed since the last call (SQLite's
   * data_version grows too: it counts the changes its connection has seen).
   */
  current(): number {
    if (this.fd !== null) {
      let bytes: number;
      try {
        bytes = readSync(this.fd, this.read, 0, HEADER_BYTES, 0);
      } catch {
        bytes = 0;
      }
      // A short read, or bytes that are not an index header (an index SQLite has not set up yet),
      // say nothing: they count as a change.
      const header = bytes === HEADER_BYTES && (this.read.readUInt32LE(0) === INDEX_VERSION || this.read.readUInt32BE(0) === INDEX_VERSION);
      if (!header || !this.read.equals(this.seen)) {
        this.read.copy(this.seen);
        this.version += 1;
      }
      return this.version;
    }
    return Number(this.dataVersion?.get() ?? 0);
  }

  /** Only once the SQLite connection is closed (see above). */
  close(): void {
    if (this.fd === null) return;
    closeSync(this.fd);
    this.fd = null;
  }
}
