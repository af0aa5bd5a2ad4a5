// What every command is made of: its help text, its options, and a run() that makes one call
// into the services through the Runtime. Failures a user can act on are CliErrors.
import type { Runtime } from './runtime.js';

export const EXIT_OK = 0;
export const EXIT_FAILURE = 1;
export const EXIT_USAGE = 2;

/** How the help and the error messages name the program. */
export const PROGRAM = 'npm run cli --';

/** A failure the user can act on: printed as one line, no stack. */
export class CliError extends Error {
  constructor(
    message: string,
    readonly exitCode = EXIT_FAILURE,
  ) {
    super(message);
  }
}

/** A command line that cannot be run as written: exit code 2 and a pointer to the help. */
export const usageError = (message: string, command?: string): CliError =>
  new CliError(`${message} Run "${PROGRAM} ${command === undefined ? '' : `${command} `}--help".`, EXIT_USAGE);

export type Option = { name: string; type: 'string' | 'boolean'; value?: string; short?: string; description: string };
export type Args = { values: Record<string, string | boolean | undefined>; positionals: string[] };

export type Command = {
  summary: string;
  usage: string;
  description: string[];
  options: Option[];
  positionals: string[];
  run(args: Args, rt: Runtime): Promise<void>;
};

/** The trimmed value of a string option, or undefined when it was not given. */
export function text(args: Args, name: string): string | undefined {
  const value = args.values[name];
  return typeof value === 'string' ? value.trim() : undefined;
}
