// The help texts: the list of commands, and one command's usage and options.
import { PROGRAM, type Command, type Option } from './command.js';

/** `--help` with no command: every command with its summary, in the table's order. */
export function globalHelp(commands: Readonly<Record<string, Command>>): string {
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

/** `<command> --help`: the usage line, the description and the options. */
export function commandHelp(name: string, command: Command): string {
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
