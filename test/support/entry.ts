// The service's entry points as tests start them in processes of their own (the CLI, the server):
// the compiled ones (dist/, from `npm run build`, which CI's npm ci runs) when they are newer than
// every source file, else the sources through tsx. A process of the compiled service costs about
// half the CPU of one that has tsx compile src/ (~1 s less), and the suite starts a few hundred;
// an edit made after a build is still what is tested.
import { existsSync, readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const TSX = import.meta.resolve('tsx');

/** The newest modification time of the files under a directory (0 when it does not exist). */
function newest(dir: string): number {
  if (!existsSync(dir)) return 0;
  return Math.max(0, ...readdirSync(dir, { recursive: true, encoding: 'utf8' }).map((name) => statSync(join(dir, name)).mtimeMs));
}

const sourceNewest = newest(fileURLToPath(new URL('../../src', import.meta.url)));

export type Entry = { path: string; nodeArgs: readonly string[] };

/** How to start `src/<name>.ts`: its compiled file when it is newer than every source file, else through tsx. */
export function entry(name: 'cli' | 'server'): Entry {
  const built = fileURLToPath(new URL(`../../dist/${name}.js`, import.meta.url));
  if (existsSync(built) && statSync(built).mtimeMs >= sourceNewest) return { path: built, nodeArgs: [] };
  return { path: fileURLToPath(new URL(`../../src/${name}.ts`, import.meta.url)), nodeArgs: ['--import', TSX] };
}

/**
 * Node's compile cache, for the environment of a process a test starts: scripts/run-tests.mjs
 * gives its own processes one (NODE_COMPILE_CACHE), and a child with an environment of its own
 * would otherwise compile every module again. The code run is the same.
 */
export const COMPILE_CACHE: Record<string, string> = process.env.NODE_COMPILE_CACHE === undefined ? {} : { NODE_COMPILE_CACHE: process.env.NODE_COMPILE_CACHE };
