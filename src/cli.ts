// The command line: `npm run cli -- <command>` (or `node dist/cli.js <command>`). This file only
// dispatches: the commands live in src/cli/, one file per group, each parsing its arguments and
// making one call into the services. run() is the whole CLI, so the tests drive it in-process on
// any database; the few lines at the bottom make it a program.
import { realpathSync } from 'node:fs';
import { pathToFileURL } from 'node:url';
import { backup, restore } from './cli/backup.js';
import { EXIT_OK, usageError, type Command } from './cli/command.js';
import { importLaravel, migrate, seed } from './cli/db.js';
import { describe } from './cli/errors.js';
import { commandHelp, globalHelp } from './cli/help.js';
import { keyGenerate } from './cli/key.js';
import { parse } from './cli/parse.js';
import { Runtime, type CliContext } from './cli/runtime.js';
import { tokensPrune } from './cli/tokens.js';
import { adminCreate, adminDemote, adminPromote, userCreate, userDelete } from './cli/users.js';
import { twoFactorReset } from './cli/two-factor.js';

export type { CliContext } from './cli/runtime.js';

// In the order the help lists them.
const commands: Readonly<Record<string, Command>> = {
  'db:migrate': migrate,
  'db:seed': seed,
  'user:create': userCreate,
  'user:delete': userDelete,
  'admin:create': adminCreate,
  'admin:promote': adminPromote,
  'admin:demote': adminDemote,
  'user:2fa-reset': twoFactorReset,
  'db:import-laravel': importLaravel,
  'db:backup': backup,
  'db:restore': restore,
  'key:generate': keyGenerate,
  'tokens:prune': tokensPrune,
};

/** Runs one command line (without the program name) and returns the exit code. */
export async function run(argv: readonly string[], ctx: CliContext): Promise<number> {
  const trace = argv.includes('--trace');
  const args = argv.filter((arg) => arg !== '--trace');
  const [name, ...rest] = args;
  if (name === undefined || name === '--help' || name === '-h' || name === 'help') {
    const topic = name === 'help' ? rest[0] : undefined;
    const command = topic === undefined || !Object.hasOwn(commands, topic) ? undefined : commands[topic];
    ctx.stdout.write(command === undefined || topic === undefined ? globalHelp(commands) : commandHelp(topic, command));
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
