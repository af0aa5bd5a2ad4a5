// Passkeys end to end in headless Chromium with a virtual authenticator (the DevTools protocol's
// WebAuthn domain, through playwright-core's CDP session): register after confirming the
// password (the addition goes on by itself once confirmed), see it listed, log out, sign in with it, confirm a removal with it, remove it; the
// panel's sign-in with an administrator's passkey; axe on the pages in light and dark. APP_URL is
// http://localhost:<port>: WebAuthn needs a secure context, and an IP address is no RP id.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { Browser, Page } from 'playwright-core';
import { buildApp } from '../../src/app.js';
import { createTestDatabase, testConfig, type TestDatabase } from '../helpers.js';
import { launchBrowser, listenWithAppUrl, pageWithAuthenticator, skipWithoutChromium, assertAccessibleLightAndDark } from '../support/browser.js';
import type { FastifyInstance } from 'fastify';

const PASSWORD = 'passkey-browser-password';

describe('passkeys in Chromium', { skip: skipWithoutChromium }, () => {
  let database: TestDatabase;
  let app: FastifyInstance;
  let url: string;
  let browser: Browser;

  before(async () => {
    database = await createTestDatabase();
    ({ app, url } = await listenWithAppUrl('localhost', (address) => buildApp(testConfig({ APP_URL: address }), { db: database.db })));
    browser = await launchBrowser();
  });
  after(async () => {
    await browser?.close();
    await app?.close();
    await database?.drop();
  });

  const newPage = () => pageWithAuthenticator(browser);

  const audit = assertAccessibleLightAndDark;

  const signIn = async (page: Page, email: string) => {
    await page.goto(`${url}/login`);
    await page.getByLabel('Email').fill(email);
    await page.getByLabel('Password').fill(PASSWORD);
    await page.getByRole('button', { name: 'Log in' }).click();
    await page.waitForURL(`${url}/dashboard`);
  };

  /**
   * Adds a passkey from the security page: the password is asked first, then the authenticator,
   * with no second press of Add (the name waits while the password is confirmed).
   */
  const addPasskey = async (page: Page, name: string) => {
    await page.goto(`${url}/security`);
    await page.getByLabel('Passkey name').fill(name);
    await page.getByRole('button', { name: 'Add a passkey' }).click();
    await page.waitForURL(`${url}/user/confirm-password`);
    await page.getByRole('textbox', { name: 'Password' }).fill(PASSWORD);
    await page.getByRole('button', { name: 'Confirm', exact: true }).click();
    await page.getByRole('status').filter({ hasText: `Passkey “${name}” added.` }).waitFor();
    assert.equal(new URL(page.url()).pathname, '/security');
  };

  it('registers a passkey, signs in with it, confirms a removal with it and removes it', async () => {
    await app.services.users.create({ name: 'Grace Hopper', email: 'grace@example.com', password: PASSWORD, verified: true });
    const { page, errors, credentials } = await newPage();
    await page.goto(`${url}/login`);
    await page.getByRole('button', { name: 'Sign in with a passkey' }).waitFor();
    await audit(page, 'login with passkey button');

    await signIn(page, 'grace@example.com');
    await page.goto(`${url}/security`);
    await audit(page, 'security page without passkeys');
    await addPasskey(page, 'Work laptop');
    assert.equal((await credentials()).length, 1);
    const row = page.locator('table.passkeys-list tbody tr');
    assert.equal(await row.count(), 1);
    assert.match(await row.innerText(), /Work laptop/);
    await audit(page, 'security page with a passkey');

    await page.getByRole('button', { name: 'Log out' }).click();
    await page.waitForURL(`${url}/`);
    await page.goto(`${url}/login`);
    await page.getByRole('button', { name: 'Sign in with a passkey' }).click();
    await page.waitForURL(`${url}/dashboard`);

    // A new session: the password was not confirmed in it, so the removal asks first, and the
    // passkey answers for the password.
    await page.goto(`${url}/security`);
    assert.doesNotMatch(await row.innerText(), /Never/);
    await page.getByRole('button', { name: 'Remove the passkey Work laptop' }).click();
    await page.waitForURL(`${url}/user/confirm-password`);
    await audit(page, 'confirm page with a passkey');
    // Once confirmed, the removal asked for goes on: no second press of Remove.
    await page.getByRole('button', { name: 'Confirm with a passkey' }).click();
    await page.getByRole('status').filter({ hasText: 'Passkey removed.' }).waitFor();
    assert.equal(new URL(page.url()).pathname, '/security');
    assert.equal(await row.count(), 0);
    assert.deepEqual(errors, []);
  });

  it('starts no ceremony on a later visit of the security page, only on the way back from the confirmation', async () => {
    await app.services.users.create({ name: 'Mary Jackson', email: 'mary@example.com', password: PASSWORD, verified: true });
    const { page, errors, credentials } = await newPage();
    await signIn(page, 'mary@example.com');
    await page.goto(`${url}/security`);
    // A name left waiting by an abandoned confirmation, then the page opened by its address.
    await page.evaluate(() => window.sessionStorage.setItem('tessera.passkeyPending', JSON.stringify({ name: 'Left behind', at: Date.now() })));
    await page.goto(`${url}/security`);
    await page.getByLabel('Passkey name').waitFor();
    await page.waitForTimeout(500);
    assert.equal(await page.getByLabel('Passkey name').inputValue(), '');
    assert.equal((await credentials()).length, 0);
    assert.equal(await page.evaluate(() => window.sessionStorage.getItem('tessera.passkeyPending')), null, 'dropped, not kept for later');
    assert.deepEqual(errors, []);
  });

  it('opens the panel to an administrator’s passkey', async () => {
    await app.services.users.create({ name: 'Ada Lovelace', email: 'ada@example.com', password: PASSWORD, verified: true, admin: true });
    const { page, errors } = await newPage();
    await signIn(page, 'ada@example.com');
    await addPasskey(page, 'Security key');
    await page.goto(`${url}/admin/login`);
    await audit(page, 'panel login with passkey button');
    await page.getByRole('button', { name: 'Sign in with a passkey' }).click();
    await page.waitForURL(`${url}/admin`);
    assert.deepEqual(errors, []);
  });
});
