// Recognising database errors the same way on SQLite and PostgreSQL.

/** True for a unique-constraint violation. */
export function isUniqueViolation(error: unknown): boolean {
  const code = (error as { code?: unknown } | null)?.code;
  return code === '23505' || code === 'SQLITE_CONSTRAINT_UNIQUE';
}

const UNAVAILABLE_CODES = new Set(['ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'EPIPE', '57P01', '57P02', '57P03', '53300', '08000', '08003', '08006', '08001', '08004', '57014', 'SQLITE_BUSY']);

/** True when the database could not be reached or answered too slowly: a 503, not a 500. */
export function isDatabaseUnavailable(error: unknown): boolean {
  const e = error as { code?: unknown; message?: unknown } | null;
  if (typeof e?.code === 'string' && UNAVAILABLE_CODES.has(e.code)) return true;
  const message = typeof e?.message === 'string' ? e.message : '';
  // pg's own errors carry no code: a cut or refused connection, a full pool, an answer that never came.
  return /Connection terminated|timeout exceeded when trying to connect|Connection ended unexpectedly|Query read timeout|is not queryable/i.test(message);
}

// PostgreSQL's codes for a server that answers but cannot store: 53100 disk_full, 53000
// insufficient_resources, 58030 io_error, 25006 read_only_sql_transaction (a standby, or
// default_transaction_read_only after a failover).
const UNWRITABLE_CODES = new Set(['ENOSPC', 'EROFS', '53100', '53000', '58030', '25006', 'SQLITE_FULL']);

/**
 * True when the database answers but cannot store a write: a full disk (SQLITE_FULL, 53100), an
 * I/O error (SQLITE_IOERR_*, what SQLite says when even its WAL index cannot grow), a database
 * made read-only underneath the service (SQLITE_READONLY_*). Not the request's fault, and it ends
 * when an operator frees space: a 503 with Retry-After, not a 500.
 */
export function isDatabaseUnwritable(error: unknown): boolean {
  const code = (error as { code?: unknown } | null)?.code;
  if (typeof code !== 'string') return false;
  return UNWRITABLE_CODES.has(code) || code.startsWith('SQLITE_IOERR') || code.startsWith('SQLITE_READONLY');
}
