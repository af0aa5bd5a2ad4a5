// OIDC_PROVIDERS and each provider's variables: read with their defaults, and a misconfigured
// provider stops the start with one line naming the variable (also through the real process).
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { ConfigError, loadConfig } from '../../src/config.js';
import { startupReport } from '../../src/startup-errors.js';
import { TEST_APP_KEY } from '../helpers.js';
import { spawnServer } from '../load/server-process.js';
import { freePort } from '../support/browser.js';

const load = (env: Record<string, string>) => loadConfig({ NODE_ENV: 'test', APP_KEY: TEST_APP_KEY, ...env });
const corp = { OIDC_PROVIDERS: 'corp', OIDC_CORP_ISSUER: 'https://id.example.com/realms/staff', OIDC_CORP_CLIENT_ID: 'tessera', OIDC_CORP_CLIENT_SECRET: 's3cret-value' };

describe('OIDC provider settings', () => {
  it('has no provider by default', () => {
    assert.deepEqual(load({}).oidcProviders, []);
  });

  it('reads a provider with its defaults: the name as label, openid email profile', () => {
    assert.deepEqual(load(corp).oidcProviders, [
      { name: 'corp', issuer: 'https://id.example.com/realms/staff', clientId: 'tessera', clientSecret: 's3cret-value', label: 'corp', scopes: ['openid', 'email', 'profile'] },
    ]);
  });

  it('reads a label and scopes, and a name with "-" through variables with "_"', () => {
    const config = load({
      OIDC_PROVIDERS: 'google, my-idp',
      OIDC_GOOGLE_ISSUER: 'https://accounts.google.com',
      OIDC_GOOGLE_CLIENT_ID: 'g',
      OIDC_GOOGLE_CLIENT_SECRET: 'gs',
      OIDC_GOOGLE_LABEL: 'Google',
      OIDC_MY_IDP_ISSUER: 'http://127.0.0.1:9000',
      OIDC_MY_IDP_CLIENT_ID: 'm',
      OIDC_MY_IDP_CLIENT_SECRET: 'ms',
      OIDC_MY_IDP_SCOPES: 'openid email',
    });
    assert.deepEqual(
      config.oidcProviders.map((p) => [p.name, p.label, p.scopes.join(' ')]),
      [
        ['google', 'Google', 'openid email profile'],
        ['my-idp', 'my-idp', 'openid email'],
      ],
    );
  });

  const invalid: Array<[variable: string, env: Record<string, string>]> = [
    ['OIDC_PROVIDERS', { OIDC_PROVIDERS: 'Corp' }],
    ['OIDC_PROVIDERS', { OIDC_PROVIDERS: 'corp,corp' }],
    ['OIDC_PROVIDERS', { OIDC_PROVIDERS: 'my-idp,my_idp' }],
    ['OIDC_CORP_ISSUER', { ...corp, OIDC_CORP_ISSUER: '' }],
    ['OIDC_CORP_ISSUER', { ...corp, OIDC_CORP_ISSUER: 'not a url' }],
    ['OIDC_CORP_ISSUER', { ...corp, OIDC_CORP_ISSUER: 'http://id.example.com' }],
    ['OIDC_CORP_ISSUER', { ...corp, OIDC_CORP_ISSUER: 'http://127.0.0.1:9000', NODE_ENV: 'production', APP_KEY: TEST_APP_KEY }],
    ['OIDC_CORP_ISSUER', { ...corp, OIDC_CORP_ISSUER: 'https://id.example.com/?x=1' }],
    ['OIDC_CORP_CLIENT_ID', { ...corp, OIDC_CORP_CLIENT_ID: ' ' }],
    ['OIDC_CORP_CLIENT_SECRET', { ...corp, OIDC_CORP_CLIENT_SECRET: '' }],
    ['OIDC_CORP_SCOPES', { ...corp, OIDC_CORP_SCOPES: 'email profile' }],
  ];
  for (const [variable, env] of invalid) {
    it(`refuses ${JSON.stringify(env[variable] ?? env.OIDC_PROVIDERS)} for ${variable}, naming it`, () => {
      assert.throws(() => load(env), (error: unknown) => error instanceof ConfigError && error.message.startsWith(variable));
    });
  }

  it('accepts an http issuer on this machine outside production only', () => {
    for (const issuer of ['http://localhost:9000', 'http://127.0.0.1:9000/oidc', 'http://[::1]:9000']) {
      assert.equal(load({ ...corp, OIDC_CORP_ISSUER: issuer }).oidcProviders[0]?.issuer, issuer);
    }
  });

  it('stops the server process with one line naming the variable, and never shows a client secret', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'tessera-oidc-'));
    try {
      const child = spawnServer({ ...corp, OIDC_CORP_SCOPES: 'email', DATABASE_URL: `sqlite:${join(dir, 'app.db')}`, DATA_DIR: dir }, await freePort());
      let output = '';
      child.stdout?.on('data', (chunk: Buffer) => (output += chunk.toString('utf8')));
      child.stderr?.on('data', (chunk: Buffer) => (output += chunk.toString('utf8')));
      const code = await new Promise((resolve) => child.once('exit', resolve));
      assert.equal(code, 1);
      assert.equal(output.trim().split('\n').length, 1, output);
      assert.match(output, /^Configuration error: OIDC_CORP_SCOPES must include openid/);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('masks the client secrets in a start-up report', () => {
    const config = load(corp);
    assert.doesNotMatch(startupReport(new Error('boom s3cret-value'), config), /s3cret-value/);
  });
});
