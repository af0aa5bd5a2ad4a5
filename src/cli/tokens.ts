// tokens:prune: delete expired personal access tokens, and with --vacuum give their space back.
import { vacuum } from '../db/space.js';
import { text, usageError, type Command } from './command.js';

const megabytes = (bytes: number): string => `${(bytes / 1024 / 1024).toFixed(1)} MB`;

export const tokensPrune: Command = {
  summary: 'Delete expired personal access tokens',
  usage: '[--hours N] [--vacuum]',
  description: [
    'Deletes tokens that have expired (by their expiry date, or by age when SANCTUM_EXPIRATION',
    'is set). With --hours N, only those expired more than N hours ago. On SQLite the write-ahead',
    'log is truncated after the delete. --vacuum also returns the freed space to the disk: SQLite',
    'rewrites the database file (writes wait meanwhile, best while the service is quiet);',
    'PostgreSQL vacuums the tokens table.',
  ],
  options: [
    { name: 'hours', type: 'string', value: 'N', description: 'Keep tokens expired less than N hours ago (default 0)' },
    { name: 'vacuum', type: 'boolean', description: 'Then shrink the database (SQLite VACUUM, PostgreSQL VACUUM of the table)' },
  ],
  positionals: [],
  async run(args, rt) {
    const raw = text(args, 'hours') ?? '0';
    if (!/^\d{1,6}$/.test(raw)) throw usageError(`--hours must be a whole number of hours, got "${raw}".`, 'tokens:prune');
    const deleted = await rt.services().tokens.prune(Number(raw));
    rt.out(`Deleted ${deleted} expired token${deleted === 1 ? '' : 's'}.`);
    if (args.values.vacuum !== true) return;
    const db = rt.db();
    const space = await vacuum(db, 'personal_access_tokens');
    if (space === null) rt.out('Nothing to vacuum: the database is in memory.');
    else if (db.dialect === 'postgres') {
      // Plain VACUUM takes no lock that stops the service; VACUUM FULL would, for as long as it copies the table.
      rt.out(`Vacuumed personal_access_tokens: ${megabytes(space.before)} → ${megabytes(space.after)} (the rest is reused by new rows; VACUUM FULL returns it, but locks the table while it runs).`);
    } else rt.out(`Vacuumed the database: ${megabytes(space.before)} → ${megabytes(space.after)} (with its write-ahead log).`);
  },
};
