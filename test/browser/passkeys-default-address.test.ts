// Passkeys out of the box (issue 25 §10): the service as the README starts it, without APP_URL,
// on a loopback address. Its default APP_URL names localhost, which Chromium accepts as a
// relying-party id in a secure context, so a passkey registers and signs in there; at the old
// default, http://127.0.0.1:3000, Chromium refused the ceremony and the page said "This passkey
// could not be verified". The virtual authenticator is the DevTools protocol's (support/browser.ts).
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { FastifyInstance } from 'fastify';
import type { Browser } from 'playwright-core';
import { buildApp } from '../../src/app.js';
import { loadConfig } from '../../src/config.js';
import { TEST_APP_KEY, createTestDatabase, testConfig, type TestDatabase } from '../helpers.js';
import { launchBrowser, listenWithAppUrl, logInWithForm, pageWithAuthenticator, skipWithoutChromium } from '../support/browser.js';

const PASSWORD = 'default-address-password';

describe('passkeys at the default APP_URL in Chromium', { skip: skipWithoutChromium }, () => {
  const t: { database?: TestDatabase; app?: FastifyInstance; browser?: Browser } = {};
  let url = '';

  before(async () => {
    const database = (t.database = await createTestDatabase());
    const listening = await listenWithAppUrl('localhost', (address) => {
      // The APP_URL the service would choose itself on this port (HOST left at its default),
      // with the tests' other settings.
      const port = new URL(address).port;
      const appUrl = loadConfig({ NODE_ENV: 'test', APP_KEY: TEST_APP_KEY, PORT: port }).appUrl;
      assert.equal(appUrl, address, 'the default APP_URL names localhost');
      return buildApp({ ...testConfig({ PORT: port }), appUrl }, { db: database.db });
    });
    t.app = listening.app;
    url = listening.url;
    t.browser = await launchBrowser();
  });
  after(async () => {
    await t.browser?.close();
    await t.app?.close();
    await t.database?.drop();
  });

  it('registers a passkey at the address the service names itself, and signs in with it', async () => {
    await t.app!.services.users.create({ name: 'Katherine Johnson', email: 'katherine@example.com', password: PASSWORD, verified: true });
    const { page, errors, credentials } = await pageWithAuthenticator(t.browser!);
    await logInWithForm(page, url, '/login', 'katherine@example.com', PASSWORD);

    await page.goto(`${url}/security`);
    await page.getByLabel('Passkey name').fill('Laptop');
    await page.getByRole('button', { name: 'Add a passkey' }).click();
    await page.waitForURL(`${url}/user/confirm-password`);
    await page.getByRole('textbox', { name: 'Password' }).fill(PASSWORD);
    await page.getByRole('button', { name: 'Confirm', exact: true }).click();
    await page.waitForURL(`${url}/security`);
    await page.getByLabel('Passkey name').fill('Laptop');
    await page.getByRole('button', { name: 'Add a passkey' }).click();
    await page.getByRole('status').filter({ hasText: 'Passkey “Laptop” added.' }).waitFor();
    const held = await credentials();
    assert.equal(held.length, 1);
    assert.equal(held[0]!.rpId, 'localhost');

    await page.context().clearCookies();
    await page.goto(`${url}/login`);
    await page.getByRole('button', { name: 'Sign in with a passkey' }).click();
    await page.waitForURL(`${url}/dashboard`);
    assert.deepEqual(errors, []);
  });
});
