// Support for the contract tests: Stoplight Prism (the CLI installed as a dev dependency) as a
// validating proxy in front of a listening service, started from the document the service itself
// serves, and a reading of what Prism says about each exchange. With `--errors` Prism answers a
// response that breaks the document with a problem+json 500 of type VIOLATIONS, refuses a request
// that breaks it with its own 422 (never forwarding it), answers an undocumented path or method
// with its own 404/405, and lists every violation, request and response, in `sl-violations`.
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort } from './browser.js';

const PRISM_CLI = createRequire(import.meta.url).resolve('@stoplight/prism-cli/dist/index.js');

/** The document a running service serves at /api/openapi.json, written to a temporary file. */
export async function writeServedDocument(baseUrl: string): Promise<{ file: string; document: unknown; remove(): void }> {
  const response = await fetch(`${baseUrl}/api/openapi.json`);
  if (response.status !== 200) throw new Error(`GET /api/openapi.json answered ${response.status}`);
  const text = await response.text();
  const dir = mkdtempSync(join(tmpdir(), 'tessera-openapi-'));
  const file = join(dir, 'openapi.json');
  writeFileSync(file, text);
  return { file, document: JSON.parse(text) as unknown, remove: () => rmSync(dir, { recursive: true, force: true }) };
}

export type PrismProxy = { url: string; output(): string; stop(): Promise<void> };

/**
 * `prism proxy <document> <upstream> --errors` on a free loopback port; resolves once Prism says
 * it listens. `validateRequest: false` forwards requests that break the document (a bad body), so
 * that the service's own refusal is what Prism checks.
 */
export async function startPrismProxy(documentFile: string, upstream: string, options: { validateRequest?: boolean } = {}): Promise<PrismProxy> {
  for (let attempt = 1; ; attempt += 1) {
    const port = await freePort();
    const args = ['proxy', documentFile, upstream, '--errors', '--port', String(port), '--host', '127.0.0.1', '--multiprocess=false'];
    if (options.validateRequest === false) args.push('--validate-request=false');
    const child = spawn(process.execPath, [PRISM_CLI, ...args], { stdio: ['ignore', 'pipe', 'pipe'], env: { PATH: process.env.PATH ?? '', NODE_ENV: 'test' } });
    try {
      return await listening(child, port);
    } catch (error) {
      if (!(error instanceof PortTaken) || attempt >= 5) throw error;
    }
  }
}

class PortTaken extends Error {}

function listening(child: ChildProcess, port: number): Promise<PrismProxy> {
  let output = '';
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const stop = async () => {
    if (child.exitCode === null && child.signalCode === null) {
      child.kill('SIGTERM');
      const killer = setTimeout(() => child.kill('SIGKILL'), 3000);
      await exited;
      clearTimeout(killer);
    }
  };
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      void stop().then(() => reject(new Error(`Prism did not start within 30 s: ${output}`)));
    }, 30_000);
    const read = (chunk: Buffer) => {
      output += chunk.toString('utf8');
      if (output.includes(`Prism is listening on http://127.0.0.1:${port}`)) {
        clearTimeout(timer);
        resolve({ url: `http://127.0.0.1:${port}`, output: () => output, stop });
      }
    };
    child.stdout?.on('data', read);
    child.stderr?.on('data', read);
    void exited.then(() => {
      clearTimeout(timer);
      reject(/EADDRINUSE/.test(output) ? new PortTaken(output) : new Error(`Prism exited before listening: ${output}`));
    });
  });
}

export type Violation = { location?: string[]; severity?: string; code?: string | number; message: string };

/**
 * What Prism found wrong with one exchange: the violations of its `sl-violations` header, and
 * Prism's own error answer (problem+json whose `type` names a Prism error) as one more, since
 * then the service's answer never reached the client.
 */
export function prismFindings(status: number, headers: Headers, body: string): Violation[] {
  const found: Violation[] = [];
  const header = headers.get('sl-violations');
  if (header !== null) {
    try {
      found.push(...(JSON.parse(header) as Violation[]));
    } catch {
      found.push({ message: header });
    }
  }
  if ((headers.get('content-type') ?? '').startsWith('application/problem+json')) {
    try {
      const problem = JSON.parse(body) as { type?: string; title?: string; detail?: string; validation?: Violation[] };
      if (problem.type?.startsWith('https://stoplight.io/prism/errors#') === true) {
        const known = new Set(found.map((violation) => JSON.stringify(violation)));
        found.push({ code: status, message: `Prism answered ${status} ${problem.type.split('#')[1] ?? ''}: ${problem.title ?? ''}${problem.detail === undefined ? '' : ` (${problem.detail})`}` });
        for (const violation of problem.validation ?? []) if (!known.has(JSON.stringify(violation))) found.push(violation);
      }
    } catch {
      // Not JSON: not Prism's answer.
    }
  }
  return found;
}

/** One violation as a line: where, then Prism's message. */
export const describeViolation = (violation: Violation): string =>
  `${violation.severity === undefined ? '' : `${violation.severity}: `}${(violation.location ?? []).join('.')}${violation.location === undefined ? '' : ' '}${violation.message}`;
