// The document the service serves, linted by Redocly's CLI with its recommended rules
// (redocly.yaml): no error, and no warning but the ones accepted below, each with its reason.
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { buildTestApp, type TestApp } from '../helpers.js';

const REDOCLY_CLI = createRequire(import.meta.url).resolve('@redocly/cli/bin/cli.js');
const CONFIG = new URL('../../redocly.yaml', import.meta.url).pathname;
// A deployment's address: the document's server is APP_URL, which the linter rightly refuses to
// see as localhost.
const APP_URL = 'https://blog.tessera.test';

type Problem = { ruleId: string; severity: 'error' | 'warn'; message: string; location: { pointer: string }[] };
type Report = { totals: { errors: number; warnings: number }; problems: Problem[] };

/** The warnings accepted, where they are, and why (as redocly.yaml says). */
const ACCEPTED: { ruleId: string; pointer: string; reason: string }[] = [
  { ruleId: 'operation-4xx-response', pointer: '#/paths/~1up/get/responses', reason: 'GET /up has no input and no guard: it answers 200 or 503, never a 4xx.' },
];

/** `redocly lint` of a document, its JSON report. */
function lint(dir: string, document: unknown): Promise<Report> {
  const file = join(dir, `openapi-${Math.random().toString(36).slice(2)}.json`);
  writeFileSync(file, JSON.stringify(document));
  return new Promise((resolve, reject) => {
    const env = { PATH: process.env.PATH ?? '', HOME: dir, REDOCLY_TELEMETRY: 'off', REDOCLY_SUPPRESS_UPDATE_NOTICE: 'true', NO_COLOR: '1' };
    execFile(process.execPath, [REDOCLY_CLI, 'lint', file, '--config', CONFIG, '--format', 'json'], { env, maxBuffer: 16 * 1024 * 1024 }, (error, stdout, stderr) => {
      // Problems make the CLI exit 1 with its report on stdout; no report at all is a failure.
      try {
        resolve(JSON.parse(stdout) as Report);
      } catch {
        reject(new Error(`redocly lint gave no report (${error?.message ?? 'no error'}): ${stderr}`));
      }
    });
  });
}

const describeProblem = (p: Problem): string => `${p.severity} ${p.ruleId} at ${p.location.map((l) => l.pointer).join(', ')}: ${p.message}`;

describe('the served OpenAPI document, linted by @redocly/cli (recommended rules)', () => {
  let t: TestApp;
  let dir: string;
  let document: Record<string, unknown>;

  before(async () => {
    t = await buildTestApp({ APP_URL, SANCTUM_STATEFUL_DOMAINS: 'localhost:5173' });
    const response = await t.app.inject({ url: '/api/openapi.json' });
    assert.equal(response.statusCode, 200);
    document = response.json();
    dir = mkdtempSync(join(tmpdir(), 'tessera-redocly-'));
  });
  after(async () => {
    rmSync(dir, { recursive: true, force: true });
    await t.close();
  });

  it('reports no error, and no warning but the accepted ones', async () => {
    const report = await lint(dir, document);
    const errors = report.problems.filter((p) => p.severity === 'error');
    assert.deepEqual(errors.map(describeProblem), [], 'errors');
    const unexpected = report.problems.filter(
      (p) => p.severity === 'warn' && !ACCEPTED.some((a) => a.ruleId === p.ruleId && p.location.some((l) => l.pointer === a.pointer)),
    );
    assert.deepEqual(unexpected.map(describeProblem), [], 'warnings nobody accepted');
    // An acceptance whose warning is gone is removed with it (and from redocly.yaml).
    for (const accepted of ACCEPTED) {
      assert.ok(report.problems.some((p) => p.ruleId === accepted.ruleId && p.location.some((l) => l.pointer === accepted.pointer)), `${accepted.ruleId} at ${accepted.pointer} no longer occurs`);
    }
  });

  it('fails a document that breaks the rules (the check has teeth)', async () => {
    const paths = document.paths as Record<string, Record<string, Record<string, unknown>>>;
    const settings = { ...paths['/api/settings']?.get };
    delete settings.security;
    const broken = { ...document, info: { title: 'x' }, paths: { ...paths, '/api/settings': { get: { ...settings, responses: { 200: { $ref: '#/components/responses/Nothing' } } } } } };
    const report = await lint(dir, broken);
    const rules = new Set(report.problems.filter((p) => p.severity === 'error').map((p) => p.ruleId));
    for (const rule of ['security-defined', 'no-unresolved-refs', 'struct']) assert.ok(rules.has(rule), `${rule} not reported: ${[...rules].join(', ')}`);
  });
});
