// npm runs `prepare` after `npm install` and `npm ci`: it compiles the service to dist/, so a fresh
// clone serves with `npm install && npm start` and `npm start` itself needs no dev dependency.
// An install without dev dependencies (`npm ci --omit=dev` beside a dist/ built elsewhere) has
// no TypeScript to compile with: it keeps that dist/, and says what to do when there is none.
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { createRequire } from 'node:module';

function hasTypeScript() {
  try {
    createRequire(import.meta.url).resolve('typescript');
    return true;
  } catch {
    return false;
  }
}

if (!hasTypeScript()) {
  if (existsSync('dist/server.js')) {
    console.log('prepare: TypeScript is not installed (dev dependencies omitted); dist/ is kept as it is.');
    process.exit(0);
  }
  console.error('prepare: dist/ is missing and TypeScript is not installed: run `npm ci && npm run build && npm prune --omit=dev`.');
  process.exit(1);
}
const build = spawnSync('npm', ['run', 'build'], { stdio: 'inherit' });
process.exit(build.status ?? 1);
