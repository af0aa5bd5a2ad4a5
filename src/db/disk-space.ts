// Whether the disk that holds a SQLite database is full: SQLite says "database or disk is full"
// for a write, but only "disk I/O error" when it cannot even create its WAL index at open, which
// names nothing an operator can act on. The file system itself says how much room is left.
import { statfsSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { isDatabaseUnwritable } from './errors.js';

// Less than this left counts as full: SQLite needs a few pages for its WAL and its index.
const FULL_BELOW_BYTES = 1024 * 1024;

/** Bytes an unprivileged writer may still use on the file system of `path`'s directory; null if unknown. */
export function freeBytes(path: string): number | null {
  try {
    const stats = statfsSync(dirname(resolve(path)));
    return stats.bavail * stats.bsize;
  } catch {
    return null;
  }
}

/** True when `error` (from opening or writing the SQLite file at `path`) comes from a full disk. */
export function isFullDisk(error: unknown, path: string): boolean {
  const code = (error as { code?: unknown } | null)?.code;
  if (code === 'SQLITE_FULL' || code === 'ENOSPC') return true;
  if (!isDatabaseUnwritable(error)) return false;
  const free = freeBytes(path);
  return free !== null && free < FULL_BELOW_BYTES;
}
