// Run before the service, the watcher and the CLI (package.json scripts): on a Node.js older than
// package.json's `engines.node` the app's native modules (better-sqlite3) crash the process with a
// segmentation fault and no word, so this says which version is needed, in one line, and exits 1
// before anything of the app is loaded. Written for old Node versions too: no dependency, nothing
// newer than Node 12 syntax.
import { readFileSync } from 'node:fs';

const manifest = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8'));
const wanted = (manifest.engines && manifest.engines.node) || '';
const minimum = Number((/(\d+)/.exec(wanted) || [])[1]);
const running = process.versions.node;
if (Number.isFinite(minimum) && Number(running.split('.')[0]) < minimum) {
  process.stderr.write(`Tessera needs Node.js ${minimum} or newer (package.json engines: "${wanted}"); this is Node.js ${running}. With nvm: nvm install (reads .nvmrc); or see https://nodejs.org/en/download\n`);
  process.exit(1);
}
