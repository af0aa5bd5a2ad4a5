// What the user reads when a command fails, and the exit code that goes with it.
import { ConfigError } from '../config.js';
import { isDatabaseUnavailable } from '../db/errors.js';
import { AppError, ValidationError } from '../modules/shared/errors.js';
import { databaseFailureLine } from '../startup-errors.js';
import { CliError, EXIT_FAILURE, PROGRAM } from './command.js';
import { PromptAborted } from './prompt.js';

function isMissingTable(error: unknown): boolean {
  const e = error as { code?: unknown; message?: unknown } | null;
  return e?.code === '42P01' || (typeof e?.message === 'string' && /no such table/i.test(e.message));
}

// One line a person can act on, whatever went wrong; the stack only with --trace.
export function describe(error: unknown, trace: boolean, databaseUrl: string | undefined): { message: string; code: number } {
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
