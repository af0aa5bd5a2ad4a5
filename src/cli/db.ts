// Database commands: apply migrations, fill a development database with demo content, import
// the users and tokens of a Laravel + Sanctum app.
import { migrateToLatest } from '../db/migrator.js';
import { ImportError, importLaravelRows, readLaravelDatabase } from '../modules/import/laravel.js';
import { CliError, text, usageError, type Command } from './command.js';
import { DEMO_PASSWORD, DEMO_USERS, seedDemo } from './seed.js';

export const migrate: Command = {
  summary: 'Apply the pending database migrations',
  usage: '',
  description: ['Applies every migration not yet applied to DATABASE_URL (npm start does the same).'],
  options: [],
  positionals: [],
  async run(_args, rt) {
    const applied = await migrateToLatest(rt.db());
    if (applied.length === 0) rt.out('Nothing to migrate.');
    for (const name of applied) rt.out(`Migrated: ${name}`);
  },
};

export const seed: Command = {
  summary: 'Fill the database with demo content',
  usage: '[--force]',
  description: [
    'Creates demo accounts (one administrator), 44 posts in English and French (published,',
    'drafts, archived and one scheduled) and the site settings, one of them private.',
    `Every demo account has the password "${DEMO_PASSWORD}". Content that already exists is kept.`,
  ],
  options: [{ name: 'force', type: 'boolean', description: 'Run even when NODE_ENV is production' }],
  positionals: [],
  async run(args, rt) {
    if (rt.config().env === 'production' && args.values.force !== true) {
      throw new CliError('db:seed refuses to run in production: the demo accounts have a known password. Add --force to do it anyway.');
    }
    const created = await seedDemo(rt.services());
    rt.out(`Seeded ${created.users} users, ${created.posts} posts and ${created.settings} settings.`);
    rt.out(`Demo accounts (password "${DEMO_PASSWORD}"): ${DEMO_USERS.map((u) => u.email + (u.admin ? ' (administrator)' : '')).join(', ')}`);
  },
};

/** A column the Laravel database lacked, with what the import put in its place. */
function describeMissing(column: string): string {
  const name = column.slice(column.indexOf('.') + 1);
  const meaning =
    name === 'email_verified_at' ? 'no email verified'
    : name === 'created_at' ? 'the time of the import'
    : name === 'updated_at' ? 'the creation date'
    : name === 'abilities' ? 'no abilities'
    : name === 'expires_at' ? 'no expiry date of their own'
    : name === 'last_used_at' ? 'never used'
    : 'none';
  return `${column} (${meaning})`;
}

export const importLaravel: Command = {
  summary: 'Import the users and tokens of a Laravel + Sanctum app',
  usage: '--from URL [--user-model CLASS]',
  description: [
    'Copies the users and their personal access tokens from a Laravel database (sqlite:PATH or',
    'postgres://…, read only) into this one, which must have no users or tokens yet. Ids are',
    'kept, so the app\'s tokens keep working; bcrypt passwords sign in and are rehashed to',
    'argon2id at the next login. Laravel\'s timestamps are read as UTC (its default timezone).',
    'Nobody becomes an administrator (admin:promote does); remember-me cookies are not carried over.',
    'Columns Laravel apps may lack (email_verified_at, remember_token, timestamps; a token\'s',
    'abilities, last_used_at, expires_at, timestamps) import as empty, and the summary names them:',
    'a missing created_at becomes the time of the import, a missing updated_at the creation date.',
  ],
  options: [
    { name: 'from', type: 'string', value: 'URL', description: 'The Laravel database: sqlite:PATH or postgres://…' },
    { name: 'user-model', type: 'string', value: 'CLASS', description: 'tokenable_type of user tokens (default App\\Models\\User)' },
  ],
  positionals: [],
  async run(args, rt) {
    const from = text(args, 'from');
    if (from === undefined || from === '') throw usageError('Missing --from.', 'db:import-laravel');
    const userModel = text(args, 'user-model') ?? 'App\\Models\\User';
    try {
      const rows = await readLaravelDatabase(from);
      const result = await importLaravelRows(rt.db(), rows, userModel);
      const skipped = result.skippedTokens === 0 ? '' : ` (${result.skippedTokens} token${result.skippedTokens === 1 ? '' : 's'} of another model or of no user skipped)`;
      rt.out(`Imported ${result.users} user${result.users === 1 ? '' : 's'} and ${result.tokens} token${result.tokens === 1 ? '' : 's'}${skipped}.`);
      if (result.missing.length > 0) rt.out(`Missing in the Laravel database, so imported as empty: ${result.missing.map(describeMissing).join(', ')}.`);
    } catch (error) {
      if (error instanceof ImportError) throw new CliError(`Nothing imported: ${error.message}`);
      throw error;
    }
  },
};
