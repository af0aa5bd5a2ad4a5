// TRUSTED_PROXIES: which reverse proxies may name the client in X-Forwarded-For. The address
// decides the anonymous API budget, the credential limits, the login throttles and the audit
// log's ip, so the tests watch it through the anonymous per-IP limit and an audit entry.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { FastifyInstance } from 'fastify';
import { ConfigError } from '../../src/config.js';
import { buildTestApp, testConfig } from '../helpers.js';
import { WebClient } from '../support/client.js';
import { auditRows, createAdminByCli } from '../admin/support.js';

describe('TRUSTED_PROXIES configuration', () => {
  it('believes no forwarded header by default', () => {
    assert.equal(testConfig().trustedProxies, false);
    assert.equal(testConfig({ TRUSTED_PROXIES: '' }).trustedProxies, false);
  });

  it('takes addresses, CIDR ranges and the named ranges', () => {
    assert.deepEqual(testConfig({ TRUSTED_PROXIES: '10.0.0.0/8, Loopback ,::1,2001:db8::/32,192.0.2.7' }).trustedProxies, [
      '10.0.0.0/8',
      'loopback',
      '::1',
      '2001:db8::/32',
      '192.0.2.7',
    ]);
  });

  it('refuses "*", hop counts, host names and bad ranges, naming the variable', () => {
    for (const value of ['*', '10.0.0.1,*', '1', '2', 'loopback,1', 'proxy.internal', '10.0.0.0/33', '::/129', '10.0.0.0/8/1', '10.0.0.0/', '300.1.1.1']) {
      assert.throws(() => testConfig({ TRUSTED_PROXIES: value }), (error: unknown) => error instanceof ConfigError && error.message.startsWith('TRUSTED_PROXIES'), value);
    }
  });
});

const CLIENT_A = '203.0.113.10';
const CLIENT_B = '203.0.113.20';

/** Status codes of anonymous GET /api/posts from the socket 127.0.0.1 with these X-Forwarded-For values. */
async function statuses(app: FastifyInstance, forwardedFor: string[]): Promise<number[]> {
  const codes: number[] = [];
  for (const value of forwardedFor) {
    const response = await app.inject({ url: '/api/posts', remoteAddress: '127.0.0.1', headers: { 'x-forwarded-for': value } });
    codes.push(response.statusCode);
  }
  return codes;
}

/** An app with an anonymous budget of 2 requests a minute per client address. */
async function withBudget(trustedProxies: string, test: (app: FastifyInstance) => Promise<void>): Promise<void> {
  const t = await buildTestApp({ API_RATE_LIMIT: '2', TRUSTED_PROXIES: trustedProxies });
  try {
    await test(t.app);
  } finally {
    await t.close();
  }
}

describe('the client address behind a reverse proxy', () => {
  it('by default counts the socket address, whatever X-Forwarded-For says', () =>
    withBudget('', async (app) => {
      assert.deepEqual(await statuses(app, [CLIENT_A, CLIENT_B, '198.51.100.1']), [200, 200, 429]);
    }));

  it('with the proxy trusted, gives each forwarded client its own budget', () =>
    withBudget('loopback', async (app) => {
      assert.deepEqual(await statuses(app, [CLIENT_A, CLIENT_A, CLIENT_A, CLIENT_B]), [200, 200, 429, 200]);
    }));

  it('reads the nearest untrusted entry: addresses a client writes in front of its own are never believed', () =>
    withBudget('127.0.0.1', async (app) => {
      assert.deepEqual(await statuses(app, [CLIENT_A, CLIENT_A]), [200, 200]);
      // The proxy appends the address it saw (A) to what the client sent: A is still the client.
      assert.deepEqual(await statuses(app, [`198.51.100.1, ${CLIENT_A}`, `198.51.100.2, ${CLIENT_A}`]), [429, 429]);
    }));

  it('ignores X-Forwarded-For from a sender that is not a trusted proxy', () =>
    withBudget('10.0.0.0/8', async (app) => {
      assert.deepEqual(await statuses(app, [CLIENT_A, CLIENT_B, '198.51.100.1']), [200, 200, 429]);
    }));

  it('skips every trusted proxy in a chain', () =>
    withBudget('loopback,10.0.0.0/8', async (app) => {
      assert.deepEqual(await statuses(app, [`${CLIENT_A}, 10.1.2.3`, `${CLIENT_B}, 10.9.9.9`, `${CLIENT_A}, 10.4.4.4`, `${CLIENT_A}, 10.4.4.4`]), [200, 200, 200, 429]);
    }));

  for (const [trusted, expected] of [
    ['loopback', CLIENT_A],
    ['', '127.0.0.1'],
  ] as const) {
    it(`records ${trusted === '' ? 'the socket address' : 'the forwarded client'} in the audit log ${trusted === '' ? 'by default' : 'behind a trusted proxy'}`, async () => {
      const t = await buildTestApp({ TRUSTED_PROXIES: trusted });
      try {
        const admin = await createAdminByCli(t);
        const client = new WebClient(t.app);
        await client.get('/admin/login');
        const response = await client.post('/admin/login', { email: admin.email, password: admin.plainPassword }, { headers: { 'x-forwarded-for': CLIENT_A } });
        assert.equal(response.statusCode, 303, response.body);
        const login = (await auditRows(t)).find((row) => row.action === 'admin.login');
        assert.equal(login?.ip, expected);
      } finally {
        await t.close();
      }
    });
  }
});
