// An https provider whose certificate comes from a private CA: the service trusts it through
// Node's own setting (NODE_EXTRA_CA_CERTS) and nothing of its own; without it the discovery fails
// (logged, the start goes on) and the button leads back to /login. Real server processes, a real
// provider over TLS on loopback, a certificate made by openssl for the test.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { startServerProcess, type ServerProcess } from '../load/server-process.js';
import { freePort } from '../support/browser.js';
import { startTestProvider, type TestProvider } from '../support/oidc-provider.js';

describe('an https provider with a private CA', () => {
  let dir: string;
  let provider: TestProvider;
  let port: number;

  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'tessera-oidc-tls-'));
    execFileSync('openssl', ['req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-days', '1', '-subj', '/CN=localhost', '-addext', 'subjectAltName=DNS:localhost',
      '-keyout', join(dir, 'key.pem'), '-out', join(dir, 'cert.pem')], { stdio: 'ignore' });
    port = await freePort();
    provider = await startTestProvider([`http://127.0.0.1:${port}/auth/corp/callback`], { tls: { key: readFileSync(join(dir, 'key.pem'), 'utf8'), cert: readFileSync(join(dir, 'cert.pem'), 'utf8') } });
  });
  after(async () => {
    await provider.close();
    rmSync(dir, { recursive: true, force: true });
  });

  const start = (name: string, extra: Record<string, string>) =>
    startServerProcess({ ...provider.env('corp'), DATABASE_URL: `sqlite:${join(dir, `${name}.db`)}`, DATA_DIR: join(dir, name), LOG_LEVEL: 'info', ...extra }, { port });
  const redirect = async (server: ServerProcess) => {
    const response = await fetch(`${server.url}/auth/corp/redirect`, { redirect: 'manual' });
    await response.body?.cancel();
    return response.headers.get('location') ?? '';
  };

  it('reaches the provider when NODE_EXTRA_CA_CERTS names the CA', async () => {
    const server = await start('trusted', { NODE_EXTRA_CA_CERTS: join(dir, 'cert.pem') });
    try {
      assert.ok((await redirect(server)).startsWith(`${provider.issuer}/`), server.output());
    } finally {
      await server.stop();
    }
  });

  it('starts without it, logs the failed discovery, and sends the button back to /login', async () => {
    const server = await start('untrusted', {});
    try {
      assert.equal(await redirect(server), '/login');
      // Log lines are written in blocks, at least once a second.
      for (let waited = 0; waited < 5000 && !server.output().includes('OIDC provider discovery failed'); waited += 100) await new Promise((resolve) => setTimeout(resolve, 100));
      assert.match(server.output(), /OIDC provider discovery failed; will try again/);
      assert.doesNotMatch(server.output(), new RegExp(provider.clientSecret));
    } finally {
      await server.stop();
    }
  });
});
