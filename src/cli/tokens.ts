// tokens:prune: delete expired personal access tokens.
import { text, usageError, type Command } from './command.js';

export const tokensPrune: Command = {
  summary: 'Delete expired personal access tokens',
  usage: '[--hours N]',
  description: [
    'Deletes tokens that have expired (by their expiry date, or by age when SANCTUM_EXPIRATION',
    'is set). With --hours N, only those expired more than N hours ago.',
  ],
  options: [{ name: 'hours', type: 'string', value: 'N', description: 'Keep tokens expired less than N hours ago (default 0)' }],
  positionals: [],
  async run(args, rt) {
    const raw = text(args, 'hours') ?? '0';
    if (!/^\d{1,6}$/.test(raw)) throw usageError(`--hours must be a whole number of hours, got "${raw}".`, 'tokens:prune');
    const deleted = await rt.services().tokens.prune(Number(raw));
    rt.out(`Deleted ${deleted} expired token${deleted === 1 ? '' : 's'}.`);
  },
};
