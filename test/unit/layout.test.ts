// The layout's rules, read off the import statements of src/: which part may use which. Imports
// are followed transitively, type-only ones included: a part that reaches a forbidden one
// through a third is as bound to it as by a direct import. A broken rule fails here, naming the
// chain of files from the importing file to the forbidden one.
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { describe, it } from 'node:test';

const SRC = resolve(import.meta.dirname, '../../src');

/** Every .ts file under src/, as a path relative to src/. */
function sources(dir = SRC): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return sources(path);
    return entry.name.endsWith('.ts') ? [relative(SRC, path)] : [];
  });
}

/** What a file imports (types too): packages by name, project files as paths relative to src/. */
function importsOf(file: string): string[] {
  const text = readFileSync(join(SRC, file), 'utf8');
  const specifiers = [...text.matchAll(/^\s*(?:import|export)\s[^;]*?from\s+'([^']+)'/gm), ...text.matchAll(/import\(\s*'([^']+)'\s*\)/g)].map((m) => m[1]!);
  return specifiers.map((specifier) =>
    specifier.startsWith('.') ? relative(SRC, resolve(SRC, dirname(file), specifier)).replace(/\.js$/, '.ts') : specifier,
  );
}

const graph = new Map<string, string[]>();
const edges = (file: string): string[] => {
  let found = graph.get(file);
  if (found === undefined) {
    found = file.endsWith('.ts') ? importsOf(file) : [];
    graph.set(file, found);
  }
  return found;
};

/**
 * The first chain from `file` to an import `forbidden` refuses, following project imports
 * breadth-first; `opaque` names files whose own imports are not followed (a fence). Null if none.
 */
export function forbiddenChain(file: string, forbidden: (imported: string) => boolean, opaque: (file: string) => boolean = () => false): string[] | null {
  const previous = new Map<string, string>([[file, '']]);
  const queue = [file];
  while (queue.length > 0) {
    const current = queue.shift()!;
    if (current !== file && opaque(current)) continue;
    for (const imported of edges(current)) {
      if (previous.has(imported)) continue;
      previous.set(imported, current);
      if (forbidden(imported)) {
        const chain = [imported];
        for (let at = current; at !== ''; at = previous.get(at)!) chain.unshift(at);
        return chain;
      }
      if (imported.endsWith('.ts')) queue.push(imported);
    }
  }
  return null;
}

// The faces: each answers one kind of client (http/shared is what they may all use).
const FACES = ['http/api/', 'http/web/', 'http/admin/', 'http/feeds/', 'http/dev/'];
const faceOf = (path: string) => FACES.find((face) => path.startsWith(face));

/** The files under `from` that reach what `forbidden` refuses, each as "a → b → c". */
function violations(from: (file: string) => boolean, forbidden: (file: string, imported: string) => boolean, opaque?: (file: string) => boolean): string[] {
  return sources()
    .filter(from)
    .flatMap((file) => {
      const chain = forbiddenChain(file, (imported) => forbidden(file, imported), opaque);
      return chain === null ? [] : [chain.join(' → ')];
    });
}

describe('the layout of src/', () => {
  it('reads the imports it judges (a sanity check of the reader itself)', () => {
    assert.ok(sources().length > 50);
    assert.ok(importsOf('app.ts').includes('http/api/index.ts'));
    assert.ok(importsOf('app.ts').includes('fastify'));
    // Transitively: app.ts reaches the domain through the faces, and a type import counts.
    assert.ok(forbiddenChain('app.ts', (imported) => imported === 'modules/tokens/abilities.ts') !== null);
    assert.equal(forbiddenChain('app.ts', (imported) => imported === 'no/such/file.ts'), null);
    // A fence stops the walk: nothing is reached past an opaque file.
    assert.equal(forbiddenChain('app.ts', (imported) => imported === 'modules/tokens/abilities.ts', (file) => file !== 'app.ts'), null);
  });

  it('the faces (http/api, web, admin, feeds, dev) reach nothing of each other', () => {
    assert.deepEqual(violations((file) => faceOf(file) !== undefined, (file, imported) => faceOf(imported) !== undefined && faceOf(imported) !== faceOf(file)), []);
  });

  it('db/ reaches nothing of modules/ (the domain), the plugins or the faces', () => {
    assert.deepEqual(violations((file) => file.startsWith('db/'), (_file, imported) => ['modules/', 'plugins/', 'http/'].some((part) => imported.startsWith(part))), []);
  });

  it('plugins/ reach nothing of a face', () => {
    assert.deepEqual(violations((file) => file.startsWith('plugins/'), (_file, imported) => faceOf(imported) !== undefined), []);
  });

  it('modules/ (the domain) reach neither Fastify nor the HTTP layer, the plugins or the app', () => {
    const outside = (imported: string) =>
      imported === 'fastify' || imported === 'fastify-plugin' || imported.startsWith('@fastify/') || ['http/', 'plugins/', 'app.ts', 'services.ts'].some((part) => imported.startsWith(part));
    assert.deepEqual(violations((file) => file.startsWith('modules/'), (_file, imported) => outside(imported)), []);
  });

  it('no file reaches itself: src/ has no import cycle (plugins/errors.ts and views.ts imported each other)', () => {
    const cycles = sources().flatMap((file) => {
      const chain = forbiddenChain(file, (imported) => imported === file);
      return chain === null ? [] : [chain.join(' → ')];
    });
    assert.deepEqual(cycles, []);
  });

  it("what a request, a reply and a session carry is declared in one file, plugins/types.ts", () => {
    const declaring = sources().filter((file) => /declare module 'fastify'/.test(readFileSync(join(SRC, file), 'utf8')));
    assert.deepEqual(declaring, ['plugins/types.ts']);
  });

  it('lib/ (generic helpers anyone may use) reaches nothing of the project outside lib/', () => {
    assert.deepEqual(violations((file) => file.startsWith('lib/'), (_file, imported) => imported.endsWith('.ts') && !imported.startsWith('lib/')), []);
  });

  it('modules/ reach the speed machinery (perf/) only through db/, its fence', () => {
    assert.deepEqual(violations((file) => file.startsWith('modules/'), (_file, imported) => imported.startsWith('perf/'), (file) => file.startsWith('db/')), []);
  });
});
