// The pages of an account without a password in headless Chromium, against a real provider on
// loopback and a virtual authenticator: an account made through the provider sees on /security
// what its actions will ask for (the provider, then a passkey), confirms with the provider to add
// a passkey, disconnects the provider and finds its passkey kept as the only way in (no Remove);
// promoted, it begins the panel's two-factor set-up with that passkey. The sign-in pages show one
// "or" before their other ways in. axe on each page in light and dark; with SCREENSHOT_DIR set,
// full-page shots at 1100 and 390 px.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { FastifyInstance } from 'fastify';
import type { Browser, Page } from 'playwright-core';
import type { Config } from '../../src/config.js';
import { createTestDatabase, type TestDatabase } from '../helpers.js';
import { runInProcess } from '../cli/harness.js';
import { assertAccessibleLightAndDark, launchBrowser, listenWithProvider, pageWithAuthenticator, screenshotLightAndDark, skipWithoutChromium } from '../support/browser.js';
import type { TestProvider } from '../support/oidc-provider.js';

describe('the pages of an account without a password, in Chromium', { skip: skipWithoutChromium }, () => {
  let database: TestDatabase;
  let provider: TestProvider | undefined;
  let config: Config | undefined;
  let app: FastifyInstance;
  let url: string;
  let browser: Browser;

  before(async () => {
    database = await createTestDatabase();
    ({ app, url, provider, config } = await listenWithProvider(database));
    browser = await launchBrowser();
  });
  after(async () => {
    await browser?.close();
    await app?.close();
    await provider?.close();
    await database?.drop();
  });

  const newPage = (width = 1100) => pageWithAuthenticator(browser, width);

  /** Checked with axe in light and dark, and shot at this width and at 390 px. */
  const look = async (page: Page, name: string) => {
    await assertAccessibleLightAndDark(page, name);
    const dir = process.env.SCREENSHOT_DIR;
    if (dir === undefined) return;
    const size = page.viewportSize()!;
    await screenshotLightAndDark(page, dir, `passwordless-${name}`);
    await page.setViewportSize({ width: 390, height: 800 });
    await screenshotLightAndDark(page, dir, `passwordless-${name}-390`);
    await page.setViewportSize(size);
  };

  /** At the provider: its login page (every login name is an account there), then its consent if it asks. */
  const throughProvider = async (page: Page, login: string) => {
    await page.waitForURL((current) => current.origin === provider!.issuer);
    await page.locator('input[name="login"]').fill(login);
    await page.locator('input[name="password"]').fill('anything');
    await page.getByRole('button', { name: 'Sign-in' }).click();
    await page.waitForURL((current) => current.origin === url || current.pathname.includes('interaction'));
    if (new URL(page.url()).origin !== url) await page.getByRole('button', { name: 'Continue' }).click();
    await page.waitForURL((current) => current.origin === url);
  };

  it('shows an account without a password what each action asks, keeps its last passkey, and lets it begin the panel’s two-factor set-up with it', async () => {
    provider!.accounts.set('ada', { email: 'ada@corp.example', email_verified: true, name: 'Ada Lovelace' });
    const { page, errors } = await newPage();
    await page.goto(`${url}/login`);
    await page.getByRole('button', { name: 'Sign in with a passkey' }).waitFor();
    assert.equal(await page.locator('.passkey-or:visible').count(), 1, 'one "or" on /login');
    await look(page, 'login');
    await page.goto(`${url}/register`);
    assert.equal(await page.locator('.passkey-or:visible').count(), 1, 'one "or" on /register');
    await look(page, 'register');
    await page.goto(`${url}/admin/login`);
    await page.getByRole('button', { name: 'Sign in with a passkey' }).waitFor();
    assert.equal(await page.getByRole('link', { name: /Continue with/ }).count(), 0, 'no provider on the panel');
    await look(page, 'admin-login');

    await page.goto(`${url}/login`);
    await page.getByRole('link', { name: 'Continue with Corp ID' }).click();
    await throughProvider(page, 'ada');
    await page.waitForURL(`${url}/dashboard`);

    await page.goto(`${url}/security`);
    const body = () => page.locator('main').innerText();
    assert.doesNotMatch(await body(), /your password first/);
    assert.match(await body(), /You will be asked to confirm it is you with Corp ID first\./);
    await look(page, 'security');

    // Adding a passkey: confirmed through the provider first (no password form to fill).
    await page.getByLabel('Passkey name').fill('Laptop');
    await page.getByRole('button', { name: 'Add a passkey' }).click();
    await page.waitForURL(`${url}/user/confirm-password`);
    await page.getByRole('heading', { name: 'Confirm it is you' }).waitFor();
    assert.equal(await page.locator('input[name="password"]').count(), 0);
    assert.equal(await page.locator('.passkey-or:visible').count(), 0, 'no "or" with nothing before it');
    await look(page, 'confirm');
    await page.getByRole('button', { name: 'Confirm with Corp ID' }).click();
    await throughProvider(page, 'ada');
    await page.waitForURL(`${url}/security`);
    await page.getByLabel('Passkey name').fill('Laptop');
    await page.getByRole('button', { name: 'Add a passkey' }).click();
    await page.getByRole('status').filter({ hasText: 'Passkey “Laptop” added.' }).waitFor();

    // The provider may go now; then the passkey is the only way in, and says so.
    await page.getByRole('button', { name: 'Disconnect Corp ID' }).click();
    await page.getByRole('status').filter({ hasText: 'Corp ID was disconnected.' }).waitFor();
    const row = page.locator('tr', { hasText: 'Laptop' });
    assert.equal(await row.getByRole('button').count(), 0, 'no Remove on the last way in');
    assert.match(await row.innerText(), /Only way to log in/);
    await look(page, 'security-last-passkey');
    await page.goto(`${url}/locale/fr`);
    await page.goto(`${url}/security`);
    assert.match(await row.innerText(), /Seul moyen de connexion/);
    await look(page, 'security-last-passkey-fr');
    await page.goto(`${url}/locale/en`);

    // Promoted, the panel: in with the passkey, and the set-up begins with it.
    const user = await database.db.kysely.selectFrom('users').select('email').where('email', '=', 'ada@corp.example').executeTakeFirstOrThrow();
    assert.equal((await runInProcess(['admin:promote', user.email], { db: database.db, config: config! })).code, 0);
    await page.goto(`${url}/admin/login`);
    await page.getByRole('button', { name: 'Sign in with a passkey' }).click();
    await page.waitForURL((current) => current.pathname.startsWith('/admin') && current.pathname !== '/admin/login');
    await page.goto(`${url}/admin/two-factor`);
    assert.equal(await page.locator('input[name="password"]').count(), 0);
    await page.getByRole('button', { name: 'Confirm with a passkey' }).waitFor();
    await look(page, 'admin-two-factor');
    await page.getByRole('button', { name: 'Confirm with a passkey' }).click();
    await page.locator('[data-secret]').waitFor();
    await look(page, 'admin-two-factor-key');
    assert.deepEqual(errors, []);
  });
});
