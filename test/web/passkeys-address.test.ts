// Passkeys at the README's address (issue 25 §10). Browsers make passkeys only for a domain name
// in a secure context: the default APP_URL names localhost when the service listens on a loopback
// or unspecified address (http://127.0.0.1:3000 before, an IP address Chromium refuses as a
// relying-party id), and where APP_URL cannot work (an IP address, or http beyond localhost) the
// security page says why and what to set instead of offering the "Add a passkey" form.
// test/browser/passkeys-default-address.test.ts registers one in Chromium at the default address.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { loadConfig } from '../../src/config.js';
import { passkeysSuggestedUrl, passkeysUnavailable } from '../../src/modules/passkeys/relying-party.js';
import { TEST_APP_KEY, buildTestApp, createUser, type TestApp } from '../helpers.js';
import { characters, WebClient } from '../support/client.js';
import { oncePerRun } from '../support/services.js';
import { login } from './support.js';

const defaultAppUrl = (env: Record<string, string>) => loadConfig({ NODE_ENV: 'test', APP_KEY: TEST_APP_KEY, ...env }).appUrl;

describe('the default APP_URL', { skip: oncePerRun('the configuration') }, () => {
  const cases: [string, Record<string, string>, string][] = [
    ['names localhost by default (HOST 127.0.0.1)', {}, 'http://localhost:3000'],
    ['follows PORT', { PORT: '8080' }, 'http://localhost:8080'],
    ['names localhost for HOST=0.0.0.0', { HOST: '0.0.0.0' }, 'http://localhost:3000'],
    ['names localhost for HOST=::', { HOST: '::' }, 'http://localhost:3000'],
    ['names localhost for HOST=::1', { HOST: '::1' }, 'http://localhost:3000'],
    ['names localhost for HOST=127.0.0.2', { HOST: '127.0.0.2' }, 'http://localhost:3000'],
    ['keeps a host name', { HOST: 'tessera.internal' }, 'http://tessera.internal:3000'],
    ['keeps another IPv4 address', { HOST: '192.0.2.10' }, 'http://192.0.2.10:3000'],
    ['brackets another IPv6 address', { HOST: '2001:db8::10' }, 'http://[2001:db8::10]:3000'],
    ['gives way to APP_URL', { APP_URL: 'https://tessera.example/' }, 'https://tessera.example'],
  ];
  for (const [name, env, expected] of cases) {
    it(name, () => assert.equal(defaultAppUrl(env), expected));
  }

  it('is an address where browsers make passkeys', () => {
    assert.equal(passkeysUnavailable(defaultAppUrl({})), null);
  });
});

describe('where browsers make passkeys', { skip: oncePerRun('a function of APP_URL') }, () => {
  const cases: [string, ReturnType<typeof passkeysUnavailable>, string | null][] = [
    ['http://localhost:3000', null, null],
    ['http://tessera.localhost:3000', null, null],
    ['https://tessera.example', null, null],
    ['http://127.0.0.1:3000', 'ip_address', 'http://localhost:3000'],
    ['https://192.0.2.10', 'ip_address', 'https://localhost'],
    ['http://[::1]:3000', 'ip_address', 'http://localhost:3000'],
    ['http://tessera.example', 'insecure', 'https://tessera.example'],
    ['http://tessera.example:8080', 'insecure', 'https://tessera.example:8080'],
  ];
  for (const [url, reason, suggestion] of cases) {
    it(`${url}: ${reason ?? 'yes'}`, () => {
      assert.equal(passkeysUnavailable(url), reason);
      if (reason !== null) assert.equal(passkeysSuggestedUrl(url, reason), suggestion);
    });
  }
});

describe('the security page where passkeys cannot work', () => {
  const apps: TestApp[] = [];
  after(async () => {
    for (const t of apps) await t.close();
  });

  /** The passkeys section of /security for a signed-in user of an app at `appUrl`. */
  async function passkeysSection(appUrl: string, language = 'en'): Promise<string> {
    const t = await buildTestApp({ APP_URL: appUrl });
    apps.push(t);
    const user = await createUser(t.app);
    const client = new WebClient(t.app);
    await login(client, user.email, user.plainPassword);
    const page = await client.get('/security', { 'accept-language': language });
    assert.equal(page.statusCode, 200);
    const section = /<section class="card passkeys-card"[\s\S]*?<\/section>/.exec(page.body)?.[0];
    assert.ok(section !== undefined, 'the passkeys section is shown');
    return section;
  }

  let atLocalhost: string;
  before(async () => {
    atLocalhost = await passkeysSection('http://localhost:3000');
  });

  it('offers the form at localhost, with no note', () => {
    assert.match(atLocalhost, /data-passkey-register/);
    assert.doesNotMatch(atLocalhost, /data-passkeys-unavailable/);
  });

  it('says an IP address cannot have passkeys and names the localhost address to set, instead of the form', async () => {
    const section = await passkeysSection('http://127.0.0.1:3000');
    assert.doesNotMatch(section, /data-passkey-register|Add a passkey/);
    assert.match(section, /data-passkeys-unavailable="ip_address"/);
    assert.match(section, /\(APP_URL, http:\/\/127\.0\.0\.1:3000\) is an IP address, and browsers make passkeys only for a domain name\./);
    assert.match(section, /The site&#39;s administrator can set APP_URL to http:\/\/localhost:3000\./);
  });

  it('says an http address beyond localhost is not secure and names the https one, in French too', async () => {
    const section = await passkeysSection('http://tessera.example:8080');
    assert.doesNotMatch(section, /data-passkey-register/);
    assert.match(section, /\(APP_URL, http:\/\/tessera\.example:8080\) is not secure, and browsers make passkeys only over https/);
    assert.match(section, /set APP_URL to https:\/\/tessera\.example:8080\./);
    const french = await passkeysSection('http://tessera.example:8080', 'fr');
    assert.match(characters(french), /n’est pas sécurisée.*régler APP_URL sur https:\/\/tessera\.example:8080\./s);
  });
});

describe('the sign-in pages where passkeys cannot work', () => {
  const apps: TestApp[] = [];
  after(async () => {
    for (const t of apps) await t.close();
  });

  /** Whether the site's and the panel's login pages of an app at `appUrl` offer a passkey. */
  async function offered(appUrl: string): Promise<boolean[]> {
    const t = await buildTestApp({ APP_URL: appUrl });
    apps.push(t);
    const pages = await Promise.all(['/login', '/admin/login'].map((url) => t.app.inject({ method: 'GET', url })));
    return pages.map((page) => {
      assert.equal(page.statusCode, 200);
      return /data-passkey-auth/.test(page.body);
    });
  }

  it('offer "Sign in with a passkey" at localhost and over https', async () => {
    assert.deepEqual(await offered('http://localhost:3000'), [true, true]);
    assert.deepEqual(await offered('https://tessera.example'), [true, true]);
  });

  it('leave it out at an IP address and over http beyond localhost, where it could only fail', async () => {
    assert.deepEqual(await offered('http://127.0.0.1:3000'), [false, false]);
    assert.deepEqual(await offered('http://tessera.example:8080'), [false, false]);
  });
});
