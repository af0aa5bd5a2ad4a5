// Sign-in with an OpenID Connect provider, the whole round trip in headless Chromium against a
// real provider on loopback (panva's oidc-provider, its own login and consent pages): Continue
// with … on /login, the provider's pages, back signed in to a new account; /security shows the
// connected account as the only way in; signed out and in again; the consent refused lands on
// /login saying so. axe on the pages with the provider's buttons, in light and dark.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { FastifyInstance } from 'fastify';
import type { Browser, Page } from 'playwright-core';
import { createTestDatabase, type TestDatabase } from '../helpers.js';
import { assertAccessibleLightAndDark, launchBrowser, listenWithProvider, screenshotLightAndDark, skipWithoutChromium } from '../support/browser.js';
import type { TestProvider } from '../support/oidc-provider.js';

describe('sign-in with a provider in Chromium', { skip: skipWithoutChromium }, () => {
  let database: TestDatabase;
  let provider: TestProvider | undefined;
  let app: FastifyInstance;
  let url: string;
  let browser: Browser;

  before(async () => {
    database = await createTestDatabase();
    ({ app, url, provider } = await listenWithProvider(database));
    browser = await launchBrowser();
  });
  after(async () => {
    await browser?.close();
    await app?.close();
    await provider?.close();
    await database?.drop();
  });

  const newPage = async () => {
    const context = await browser.newContext({ viewport: { width: 1100, height: 800 } });
    const page = await context.newPage();
    const errors: string[] = [];
    page.on('pageerror', (error) => errors.push(error.message));
    return { page, errors };
  };

  /** At the provider's login page: any login name is an account there. */
  const logInAtProvider = async (page: Page, login: string) => {
    await page.waitForURL((current) => current.origin === provider!.issuer);
    await page.locator('input[name="login"]').fill(login);
    await page.locator('input[name="password"]').fill('anything');
    await page.getByRole('button', { name: 'Sign-in' }).click();
  };

  it('signs up and in through the provider’s own login and consent pages, then again after logging out', async () => {
    provider!.accounts.set('grace', { email: 'grace@corp.example', email_verified: true, name: 'Grace Hopper' });
    const { page, errors } = await newPage();
    await page.goto(`${url}/login`);
    await assertAccessibleLightAndDark(page, '/login with a provider');
    await screenshotLightAndDark(page, process.env.SCREENSHOT_DIR, 'oidc-login');
    await page.getByRole('link', { name: 'Continue with Corp ID' }).click();
    await logInAtProvider(page, 'grace');
    // The consent page: what the app asks for.
    await page.getByRole('button', { name: 'Continue' }).click();
    await page.waitForURL(`${url}/dashboard`);
    assert.match(await page.locator('body').innerText(), /Grace Hopper/);

    await page.goto(`${url}/security`);
    const section = page.locator('.connected-accounts-card');
    assert.match(await section.innerText(), /Corp ID\s+grace@corp\.example\s+Only way to log in/);
    await assertAccessibleLightAndDark(page, '/security with a connected account');
    await screenshotLightAndDark(page, process.env.SCREENSHOT_DIR, 'oidc-security');

    // Logged out here; the provider still knows the browser and its consent: straight back in.
    await page.getByRole('button', { name: 'Log out' }).first().click();
    await page.goto(`${url}/register`);
    await page.getByRole('link', { name: 'Continue with Corp ID' }).click();
    await page.waitForURL(`${url}/dashboard`);
    assert.deepEqual(errors, []);
    const rows = await database.db.kysely.selectFrom('users').select('email').where('email', '=', 'grace@corp.example').execute();
    assert.equal(rows.length, 1);
  });

  it('lands on /login saying so when the person cancels at the provider, and makes no account', async () => {
    provider!.accounts.set('linus', { email: 'linus@corp.example', email_verified: true });
    const { page } = await newPage();
    await page.goto(`${url}/login`);
    await page.getByRole('link', { name: 'Continue with Corp ID' }).click();
    await page.waitForURL((current) => current.origin === provider!.issuer);
    await page.getByRole('link', { name: '[ Cancel ]' }).click();
    await page.waitForURL(`${url}/login`);
    assert.match(await page.getByRole('status').innerText(), /Signing in with Corp ID was cancelled/);
    const rows = await database.db.kysely.selectFrom('users').select('id').where('email', '=', 'linus@corp.example').execute();
    assert.equal(rows.length, 0);
  });
});
