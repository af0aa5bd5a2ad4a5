// The layout's rules, read off the import statements of src/: which part may use which. A rule
// broken by a new import fails here, naming the file and the import.
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

/** What a file imports: packages by name, project files as paths relative to src/. */
function importsOf(file: string): string[] {
  const text = readFileSync(join(SRC, file), 'utf8');
  const specifiers = [...text.matchAll(/^\s*(?:import|export)\s[^;]*?from\s+'([^']+)'/gm), ...text.matchAll(/import\(\s*'([^']+)'\s*\)/g)].map((m) => m[1]!);
  return specifiers.map((specifier) =>
    specifier.startsWith('.') ? relative(SRC, resolve(SRC, dirname(file), specifier)).replace(/\.js$/, '.ts') : specifier,
  );
}

// The faces: each answers one kind of client (http/shared is what they may all use).
const FACES = ['http/api/', 'http/web/', 'http/admin/', 'http/feeds/', 'http/dev/'];
const faceOf = (path: string) => FACES.find((face) => path.startsWith(face));

/** The imports of the files under `from` that `forbidden` refuses, as "file → import". */
function violations(from: (file: string) => boolean, forbidden: (file: string, imported: string) => boolean): string[] {
  return sources()
    .filter(from)
    .flatMap((file) => importsOf(file).filter((imported) => forbidden(file, imported)).map((imported) => `${file} → ${imported}`));
}

describe('the layout of src/', () => {
  it('reads the imports it judges (a sanity check of the reader itself)', () => {
    assert.ok(sources().length > 50);
    assert.ok(importsOf('app.ts').includes('http/api/index.ts'));
    assert.ok(importsOf('app.ts').includes('fastify'));
  });

  it('the faces (http/api, web, admin, feeds, dev) import nothing from each other', () => {
    assert.deepEqual(violations((file) => faceOf(file) !== undefined, (file, imported) => faceOf(imported) !== undefined && faceOf(imported) !== faceOf(file)), []);
  });

  it('db/ imports nothing from modules/', () => {
    assert.deepEqual(violations((file) => file.startsWith('db/'), (_file, imported) => imported.startsWith('modules/')), []);
  });

  it('plugins/ import nothing from a face', () => {
    assert.deepEqual(violations((file) => file.startsWith('plugins/'), (_file, imported) => faceOf(imported) !== undefined), []);
  });

  it('modules/ (the domain) import neither Fastify nor the HTTP layer, the plugins or the speed machinery', () => {
    const outside = (imported: string) =>
      imported === 'fastify' || imported.startsWith('@fastify/') || ['http/', 'plugins/', 'perf/', 'app.ts'].some((part) => imported.startsWith(part));
    assert.deepEqual(violations((file) => file.startsWith('modules/'), (_file, imported) => outside(imported)), []);
  });
});
