// A command's arguments, checked against its declared options and positionals; every mistake
// is a usage error naming the command.
import { parseArgs } from 'node:util';
import { usageError, type Args, type Command } from './command.js';

/** Parses what follows the command name; `help` is set by --help or -h, checked before anything else. */
export function parse(name: string, command: Command, argv: string[]): Args & { help: boolean } {
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
