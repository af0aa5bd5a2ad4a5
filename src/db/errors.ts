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
