// The command line: `npm run cli -- <command>` (or `node dist/cli.js <command>`). Each command
// parses its arguments, then makes one call into the services. run() is the whole CLI, so the
// tests drive it in-process on any database; the few lines at the bottom make it a program.
import { existsSync, readFileSync, realpathSync, writeFileSync } from 'node:fs';
import { resolve } from 'node:path';
import type { Readable } from 'node:stream';
import { pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';
import { Type } from '@sinclair/typebox';
import type { ErrorObject } from 'ajv';
import { ConfigError, generateAppKey, loadConfig, readEnv, type Config } from './config.js';
import { connect, type Db } from './db/connect.js';
import { isDatabaseUnavailable } from './db/errors.js';
import { migrateToLatest } from './db/migrator.js';
import { DEMO_PASSWORD, DEMO_USERS, seedDemo } from './db/seed.js';
import { formatValidationErrors, validatorCompiler } from './http/validation.js';
import { PromptAborted, Prompter } from './modules/cli/prompt.js';
import { ImportError, importLaravelRows, readLaravelDatabase } from './modules/import/laravel.js';
import { checkNewPassword } from './modules/passwords/policy.js';
import { AppError, ValidationError, type FieldErrors } from './modules/shared/errors.js';
import { EMAIL_TAKEN } from './modules/users/users.service.js';
import { createServices, type Services } from './services.js';
import { databaseFailureLine } from './startup-errors.js';

export type CliContext = {
  stdout: NodeJS.WritableStream;
  stderr: NodeJS.WritableStream;
  stdin: Readable;
  /** Whether missing values may be asked for; by default, when stdin is a terminal. */
  interactive?: boolean;
  /** An open database (tests); otherwise one is opened from the configuration and closed after. */
  db?: Db;
  /** The configuration; otherwise loadConfig(readEnv()), read only by commands that need it. */
  config?: Config;
  /** Where key:generate --write finds .env; the working directory by default. */
  cwd?: string;
};

export const EXIT_OK = 0;
export const EXIT_FAILURE = 1;
export const EXIT_USAGE = 2;

const PROGRAM = 'npm run cli --';

/** A failure the user can act on: printed as one line, no stack. */
class CliError extends Error {
  constructor(
    message: string,
    readonly exitCode = EXIT_FAILURE,
  ) {
    super(message);
  }
}

const usageError = (message: string, command?: string): CliError =>
  new CliError(`${message} Run "${PROGRAM} ${command === undefined ? '' : `${command} `}--help".`, EXIT_USAGE);

// Lazily opened resources, so that --help and key:generate work without a database or even a
// valid configuration (key:generate is how an invalid APP_KEY gets fixed).
class Runtime {
  private openedDb: Db | null = null;
  private loadedConfig: Config | undefined;
  private prompter: Prompter | null = null;
  private builtServices: Services | null = null;

  constructor(readonly ctx: CliContext) {
    this.loadedConfig = ctx.config;
  }

  out(line: string): void {
    this.ctx.stdout.write(`${line}\n`);
  }

  get interactive(): boolean {
    return this.ctx.interactive ?? (this.ctx.stdin as { isTTY?: boolean }).isTTY === true;
  }

  config(): Config {
    this.loadedConfig ??= loadConfig(readEnv());
    return this.loadedConfig;
  }

  /** DATABASE_URL once the configuration is read (to name the database in an error). */
  get databaseUrl(): string | undefined {
    return this.loadedConfig?.databaseUrl;
  }

  db(): Db {
    if (this.ctx.db !== undefined) return this.ctx.db;
    // Commands are not requests: no per-statement timeouts (a migration may build a large index).
    this.openedDb ??= connect(this.config().databaseUrl, { requestTimeouts: false });
    return this.openedDb;
  }

  services(): Services {
    this.builtServices ??= createServices(this.db(), this.config());
    return this.builtServices;
  }

  ask(question: string, hidden = false): Promise<string> {
    this.prompter ??= new Prompter({ input: this.ctx.stdin, output: this.ctx.stdout, terminal: this.interactive });
    return this.prompter.ask(question, { hidden });
  }

  async close(): Promise<void> {
    this.prompter?.close();
    // The services may hold a Redis connection (the throttles'); left open it would keep the process alive.
    if (this.builtServices !== null) await this.builtServices.close();
    if (this.openedDb !== null) await this.openedDb.close();
  }
}

type Option = { name: string; type: 'string' | 'boolean'; value?: string; short?: string; description: string };
type Args = { values: Record<string, string | boolean | undefined>; positionals: string[] };

type Command = {
  summary: string;
  usage: string;
  description: string[];
  options: Option[];
  positionals: string[];
  run(args: Args, rt: Runtime): Promise<void>;
};

// --- validation, with the API's rules and messages -------------------------------------------

const AccountFields = Type.Object({
  name: Type.String({ minLength: 1, maxLength: 255 }),
  email: Type.String({ format: 'email', minLength: 1, maxLength: 255 }),
});
const checkAccountFields = validatorCompiler({ schema: AccountFields, method: 'POST', url: '/cli', httpPart: 'body' }) as unknown as ((
  data: unknown,
) => boolean) & { errors?: ErrorObject[] | null };

type Account = { name: string; email: string; password: string };

function validateAccount(account: Account): void {
  const errors: FieldErrors = {};
  if (!checkAccountFields({ name: account.name, email: account.email })) {
    Object.assign(errors, formatValidationErrors(checkAccountFields.errors ?? []).errors);
  }
  // The CLI has no confirmation field: the password is its own confirmation.
  Object.assign(errors, checkNewPassword(account.password, account.password));
  if (Object.keys(errors).length > 0) throw new ValidationError(errors);
}

function text(args: Args, name: string): string | undefined {
  const value = args.values[name];
  return typeof value === 'string' ? value.trim() : undefined;
}

async function createAccount(rt: Runtime, account: Account, flags: { verified: boolean; admin: boolean }) {
  validateAccount(account);
  try {
    return await rt.services().users.create({ ...account, ...flags });
  } catch (error) {
    if (flags.admin && error instanceof ValidationError && error.errors.email?.includes(EMAIL_TAKEN)) {
      throw new CliError(`${EMAIL_TAKEN} To make that user an administrator: ${PROGRAM} admin:promote ${account.email}`);
    }
    throw error;
  }
}

async function setAdmin(rt: Runtime, args: Args, admin: boolean): Promise<void> {
  const email = args.positionals[0] ?? '';
  const users = rt.services().users;
  const user = await users.findByEmail(email);
  if (user === undefined) throw new CliError(`No user has the email ${email}.`);
  if ((Number(user.is_admin) === 1) === admin) {
    rt.out(`${user.email} ${admin ? 'is already' : 'is not'} an administrator; nothing changed.`);
    return;
  }
  await users.setAdmin(email, admin);
  rt.out(admin ? `${user.email} is now an administrator.` : `${user.email} is no longer an administrator.`);
}

/** Returns the .env text with APP_KEY set to `key`, replacing an existing line or appending one. */
export function withAppKey(envText: string, key: string): { text: string; replaced: boolean } {
  const line = /^[ \t]*(export[ \t]+)?APP_KEY[ \t]*=.*$/m;
  if (line.test(envText)) return { text: envText.replace(line, `APP_KEY=${key}`), replaced: true };
  const separator = envText === '' || envText.endsWith('\n') ? '' : '\n';
  return { text: `${envText}${separator}APP_KEY=${key}\n`, replaced: false };
}

// --- the commands --------------------------------------------------------------------------

const commands: Record<string, Command> = {
  'db:migrate': {
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
  },

  'db:seed': {
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
  },

  'user:create': {
    summary: 'Create a user account',
    usage: '--name NAME --email EMAIL --password PASSWORD [--verified]',
    description: ['Creates a user who is not an administrator (see admin:create).'],
    options: [
      { name: 'name', type: 'string', value: 'NAME', description: 'Display name (1 to 255 characters)' },
      { name: 'email', type: 'string', value: 'EMAIL', description: 'Login email, unique' },
      { name: 'password', type: 'string', value: 'PASSWORD', description: 'At least 8 characters' },
      { name: 'verified', type: 'boolean', description: 'Mark the email address as verified' },
    ],
    positionals: [],
    async run(args, rt) {
      const missing = ['name', 'email', 'password'].filter((name) => text(args, name) === undefined);
      if (missing.length > 0) throw usageError(`Missing ${missing.map((m) => `--${m}`).join(', ')}.`, 'user:create');
      const account = { name: text(args, 'name') ?? '', email: text(args, 'email') ?? '', password: String(args.values.password) };
      const user = await createAccount(rt, account, { verified: args.values.verified === true, admin: false });
      rt.out(`Created user #${user.id} ${user.name} <${user.email}>${user.email_verified_at === null ? ' (email not verified)' : ''}.`);
    },
  },

  'admin:create': {
    summary: 'Create an administrator account',
    usage: '[--name NAME] [--email EMAIL] [--password PASSWORD]',
    description: [
      'The only way to create an administrator. What is not given as an option is asked for',
      'on the terminal (the password without echo); prefer that to --password, which other',
      'users of the machine can see in the process list.',
    ],
    options: [
      { name: 'name', type: 'string', value: 'NAME', description: 'Display name (1 to 255 characters)' },
      { name: 'email', type: 'string', value: 'EMAIL', description: 'Login email, unique' },
      { name: 'password', type: 'string', value: 'PASSWORD', description: 'At least 8 characters' },
    ],
    positionals: [],
    async run(args, rt) {
      let name = text(args, 'name');
      let email = text(args, 'email');
      let password = typeof args.values.password === 'string' ? args.values.password : undefined;
      const missing = [name, email, password].some((value) => value === undefined);
      if (missing && !rt.interactive) {
        const flags = (['name', 'email', 'password'] as const).filter((f) => text(args, f) === undefined).map((f) => `--${f}`);
        throw usageError(`Missing ${flags.join(', ')} (stdin is not a terminal, so ${flags.length === 1 ? 'it' : 'they'} cannot be asked for).`, 'admin:create');
      }
      name ??= (await rt.ask('Name: ')).trim();
      email ??= (await rt.ask('Email: ')).trim();
      if (password === undefined) {
        password = await rt.ask('Password: ', true);
        const confirmation = await rt.ask('Confirm password: ', true);
        const errors = checkNewPassword(password, confirmation);
        if (Object.keys(errors).length > 0) throw new ValidationError(errors);
      }
      const user = await createAccount(rt, { name, email, password }, { verified: true, admin: true });
      rt.out(`Created administrator #${user.id} ${user.name} <${user.email}>.`);
    },
  },

  'admin:promote': {
    summary: 'Make an existing user an administrator',
    usage: 'EMAIL',
    description: ['Gives the user with this email access to the administration panel.'],
    options: [],
    positionals: ['EMAIL'],
    run: (args, rt) => setAdmin(rt, args, true),
  },

  'admin:demote': {
    summary: 'Take administrator rights away from a user',
    usage: 'EMAIL',
    description: ['The user keeps the account and its tokens, but loses the administration panel.'],
    options: [],
    positionals: ['EMAIL'],
    run: (args, rt) => setAdmin(rt, args, false),
  },

  'db:import-laravel': {
    summary: 'Import the users and tokens of a Laravel + Sanctum app',
    usage: '--from URL [--user-model CLASS]',
    description: [
      'Copies the users and their personal access tokens from a Laravel database (sqlite:PATH or',
      'postgres://…, read only) into this one, which must have no users or tokens yet. Ids are',
      'kept, so the app\'s tokens keep working; bcrypt passwords sign in and are rehashed to',
      'argon2id at the next login. Laravel\'s timestamps are read as UTC (its default timezone).',
      'Nobody becomes an administrator (admin:promote does); remember-me cookies are not carried over.',
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
      } catch (error) {
        if (error instanceof ImportError) throw new CliError(`Nothing imported: ${error.message}`);
        throw error;
      }
    },
  },

  'key:generate': {
    summary: 'Generate a new APP_KEY',
    usage: '[--write]',
    description: [
      'Prints a new key in Laravel\'s form "base64:<32 random bytes>". With --write it is stored in',
      './.env instead, replacing the APP_KEY line there: sessions, remember-me cookies and signed',
      'links made with the old key stop working.',
    ],
    options: [{ name: 'write', type: 'boolean', description: 'Write the key into ./.env instead of printing it' }],
    positionals: [],
    async run(args, rt) {
      const key = generateAppKey();
      if (args.values.write !== true) {
        rt.out(key);
        return;
      }
      const file = resolve(rt.ctx.cwd ?? process.cwd(), '.env');
      const before = existsSync(file) ? readFileSync(file, 'utf8') : '';
      const updated = withAppKey(before, key);
      writeFileSync(file, updated.text, { mode: 0o600 });
      rt.out(updated.replaced ? `APP_KEY replaced in ${file}.` : `APP_KEY written to ${file}.`);
    },
  },

  'tokens:prune': {
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
  },
};

// --- help ----------------------------------------------------------------------------------

function globalHelp(): string {
  const width = Math.max(...Object.keys(commands).map((name) => name.length)) + 2;
  return [
    'Tessera command line',
    '',
    `Usage: ${PROGRAM} <command> [options]`,
    '       node dist/cli.js <command> [options]',
    '',
    'Commands:',
    ...Object.entries(commands).map(([name, command]) => `  ${name.padEnd(width)}${command.summary}`),
    '',
    `Run "${PROGRAM} <command> --help" for the options of a command.`,
    'Configuration comes from the environment and ./.env (DATABASE_URL, APP_KEY, ...).',
    '',
  ].join('\n');
}

function commandHelp(name: string, command: Command): string {
  const options = [...command.options, { name: 'help', type: 'boolean', short: 'h', description: 'Show this help' } satisfies Option];
  const labels = options.map((o) => `${o.short === undefined ? '    ' : `-${o.short}, `}--${o.name}${o.value === undefined ? '' : ` ${o.value}`}`);
  const width = Math.max(...labels.map((label) => label.length)) + 2;
  return [
    `Usage: ${PROGRAM} ${name}${command.usage === '' ? '' : ` ${command.usage}`}`,
    '',
    `${command.summary}.`,
    ...command.description,
    '',
    'Options:',
    ...options.map((o, i) => `  ${(labels[i] ?? '').padEnd(width)}${o.description}`),
    '',
  ].join('\n');
}

// --- running -------------------------------------------------------------------------------

function parse(name: string, command: Command, argv: string[]): Args & { help: boolean } {
  const options: Record<string, { type: 'string' | 'boolean'; short?: string }> = { help: { type: 'boolean', short: 'h' } };
  for (const option of command.options) options[option.name] = { type: option.type };
  let parsed;
  try {
    parsed = parseArgs({ args: argv, options, allowPositionals: true, strict: true });
  } catch (error) {
    const code = (error as { code?: string }).code;
    const flag = /'(-[^']*)'/.exec((error as Error).message)?.[1];
    if (code === 'ERR_PARSE_ARGS_UNKNOWN_OPTION') throw usageError(`Unknown option ${flag ?? ''} for ${name}.`, name);
    if (code === 'ERR_PARSE_ARGS_INVALID_OPTION_VALUE') {
      const option = flag?.split(' ')[0] ?? '';
      const isFlag = command.options.some((o) => `--${o.name}` === option && o.type === 'boolean') || option === '--help';
      throw usageError(isFlag ? `Option ${option} of ${name} takes no value.` : `Option ${option} of ${name} needs a value.`, name);
    }
    throw usageError(`Invalid arguments for ${name}.`, name);
  }
  const values = parsed.values as Record<string, string | boolean | undefined>;
  if (values.help === true) return { values, positionals: parsed.positionals, help: true };
  const expected = command.positionals;
  if (parsed.positionals.length < expected.length) throw usageError(`${name} needs ${expected.join(' ')}.`, name);
  if (parsed.positionals.length > expected.length) {
    throw usageError(`Unexpected argument "${parsed.positionals[expected.length]}" for ${name}.`, name);
  }
  return { values, positionals: parsed.positionals, help: false };
}

function isMissingTable(error: unknown): boolean {
  const e = error as { code?: unknown; message?: unknown } | null;
  return e?.code === '42P01' || (typeof e?.message === 'string' && /no such table/i.test(e.message));
}

// One line a person can act on, whatever went wrong; the stack only with --trace.
function describe(error: unknown, trace: boolean, databaseUrl: string | undefined): { message: string; code: number } {
  if (error instanceof CliError) return { message: error.message, code: error.exitCode };
  if (error instanceof ConfigError) return { message: `Configuration error: ${error.message}`, code: EXIT_FAILURE };
  if (error instanceof PromptAborted) return { message: error.message, code: EXIT_FAILURE };
  if (error instanceof ValidationError) return { message: Object.values(error.errors).flat().join(' '), code: EXIT_FAILURE };
  if (error instanceof AppError) return { message: error.message, code: EXIT_FAILURE };
  if (isMissingTable(error)) return { message: `The database has no tables yet: run "${PROGRAM} db:migrate" first.`, code: EXIT_FAILURE };
  // The same line as the server's for a database it cannot open or reach (src/startup-errors.ts).
  const database = databaseUrl === undefined ? null : databaseFailureLine(error, databaseUrl);
  if (database !== null) return { message: database, code: EXIT_FAILURE };
  if (isDatabaseUnavailable(error)) {
    return { message: `The database is unavailable (${(error as Error).message}).`, code: EXIT_FAILURE };
  }
  const message = error instanceof Error ? error.message : String(error);
  const stack = trace && error instanceof Error && error.stack !== undefined ? `\n${error.stack}` : '';
  return { message: `Unexpected error: ${message}${trace ? stack : ' (run again with --trace for details)'}`, code: EXIT_FAILURE };
}

/** Runs one command line (without the program name) and returns the exit code. */
export async function run(argv: readonly string[], ctx: CliContext): Promise<number> {
  const trace = argv.includes('--trace');
  const args = argv.filter((arg) => arg !== '--trace');
  const [name, ...rest] = args;
  if (name === undefined || name === '--help' || name === '-h' || name === 'help') {
    const topic = name === 'help' ? rest[0] : undefined;
    const command = topic === undefined || !Object.hasOwn(commands, topic) ? undefined : commands[topic];
    ctx.stdout.write(command === undefined || topic === undefined ? globalHelp() : commandHelp(topic, command));
    return EXIT_OK;
  }
  const rt = new Runtime(ctx);
  try {
    const command = Object.hasOwn(commands, name) ? commands[name] : undefined;
    if (command === undefined) throw usageError(`Unknown command "${name}".`);
    const parsed = parse(name, command, rest);
    if (parsed.help) {
      ctx.stdout.write(commandHelp(name, command));
      return EXIT_OK;
    }
    await command.run(parsed, rt);
    return EXIT_OK;
  } catch (error) {
    const { message, code } = describe(error, trace, rt.databaseUrl);
    ctx.stderr.write(`${message}\n`);
    return code;
  } finally {
    await rt.close();
  }
}

function invokedDirectly(): boolean {
  const script = process.argv[1];
  if (script === undefined) return false;
  try {
    return import.meta.url === pathToFileURL(realpathSync(script)).href;
  } catch {
    return false;
  }
}

if (invokedDirectly()) {
  const code = await run(process.argv.slice(2), { stdin: process.stdin, stdout: process.stdout, stderr: process.stderr });
  process.exitCode = code;
}
