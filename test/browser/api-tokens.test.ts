// The API tokens page in headless Chromium: log in through /login, make a token, read it from
// the page, copy it with the button (or select it by hand with JavaScript off), call the API
// with it, revoke it after the confirmation step; axe-core finds no serious or critical
// violation in light, dark or on a narrow screen, and nothing breaks the CSP. SCREENSHOT_DIR=… keeps screenshots.
import assert from 'node:assert/strict';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { Browser, BrowserContextOptions, Page } from 'playwright-core';
import { launchBrowser, seriousA11yViolations, skipWithoutChromium, startServer, type RunningServer } from '../support/browser.js';

const SHOTS = process.env.SCREENSHOT_DIR;
const PASSWORD = 'grace-hopper-cobol-59';

describe('API tokens page in Chromium', { skip: skipWithoutChromium }, () => {
  let server: RunningServer;
  let browser: Browser;

  before(async () => {
    server = await startServer();
    browser = await launchBrowser();
    if (SHOTS !== undefined) mkdirSync(SHOTS, { recursive: true });
  });
  after(async () => {
    await browser?.close();
    await server?.close();
  });

  /** A fresh browser context logged in through the form as a new user. */
  const loggedInPage = async (email: string, options: BrowserContextOptions = {}) => {
    await server.app.services.users.create({ name: 'Grace Hopper', email, password: PASSWORD, verified: true });
    const context = await browser.newContext({ viewport: { width: 1100, height: 800 }, ...options });
    const page = await context.newPage();
    const errors: string[] = [];
    page.on('pageerror', (error) => errors.push(error.message));
    page.on('console', (message) => {
      if (message.type() === 'error') errors.push(message.text());
    });
    await page.goto(`${server.url}/login`);
    await page.getByLabel('Email').fill(email);
    await page.getByLabel('Password').fill(PASSWORD);
    await page.getByRole('button', { name: 'Log in' }).click();
    await page.waitForURL(`${server.url}/dashboard`);
    return { page, errors };
  };

  /** Runs axe in light and in dark mode, and keeps screenshots when asked. */
  const audit = async (page: Page, name: string) => {
    for (const colorScheme of ['light', 'dark'] as const) {
      await page.emulateMedia({ colorScheme });
      assert.deepEqual(await seriousA11yViolations(page), [], `${name} (${colorScheme})`);
      if (SHOTS !== undefined) await page.screenshot({ path: join(SHOTS, `api-tokens-${name}-${colorScheme}.png`), fullPage: true });
    }
    // A phone-sized screen, where the token table scrolls sideways.
    await page.emulateMedia({ colorScheme: 'light' });
    await page.setViewportSize({ width: 380, height: 800 });
    assert.deepEqual(await seriousA11yViolations(page), [], `${name} (narrow)`);
    const width = await page.evaluate(() => ({ page: document.documentElement.scrollWidth, screen: window.innerWidth }));
    assert.ok(width.page <= width.screen, `${name}: the page does not scroll sideways on a phone (${width.page} > ${width.screen})`);
    if (SHOTS !== undefined) await page.screenshot({ path: join(SHOTS, `api-tokens-${name}-narrow.png`), fullPage: true });
    await page.setViewportSize({ width: 1100, height: 800 });
  };

  const callApi = (token: string) => fetch(`${server.url}/api/user`, { headers: { authorization: `Bearer ${token}`, accept: 'application/json' } });

  it('makes a token, copies it with the button, calls the API with it, then revokes it', async () => {
    const { page, errors } = await loggedInPage('grace@example.com', { permissions: ['clipboard-read', 'clipboard-write'] });
    await page.getByRole('link', { name: 'API tokens' }).click();
    await page.waitForURL(`${server.url}/user/api-tokens`);
    assert.match(await page.locator('main').innerText(), /You have no API tokens yet\./);
    await audit(page, 'empty');

    await page.getByLabel('Token name').fill('build server');
    assert.equal(await page.getByRole('checkbox', { name: /posts:read/ }).isChecked(), true, 'read is ticked by default');
    // Grace is no administrator: posts:write, which the API would refuse her, is not offered.
    assert.equal(await page.getByRole('checkbox', { name: /posts:write/ }).count(), 0);
    await page.getByRole('button', { name: 'Create' }).click();
    await page.waitForURL(`${server.url}/user/api-tokens`);
    assert.equal((await page.locator('.flash[role="status"]').innerText()).trim(), 'API token created.');

    const field = page.getByLabel('API token', { exact: true });
    assert.equal(await field.getAttribute('readonly'), '');
    const token = await field.inputValue();
    assert.match(token, /^\d+\|[A-Za-z0-9]{48}$/);
    const row = page.locator('tbody tr', { hasText: 'build server' });
    assert.match(await row.innerText(), /posts:read/);
    await audit(page, 'created');

    // The script shows the button and writes the token to the clipboard.
    const copy = page.getByRole('button', { name: 'Copy' });
    assert.equal(await copy.isVisible(), true);
    await copy.click();
    await page.getByText('Copied to the clipboard.').waitFor();
    assert.equal(await page.evaluate(() => navigator.clipboard.readText()), token);

    const response = await callApi(token);
    assert.equal(response.status, 200);
    assert.equal(((await response.json()) as { email: string }).email, 'grace@example.com');

    await page.reload();
    assert.equal(await page.locator('#new-token').count(), 0, 'a reload does not show the token again');
    assert.match(await page.locator('tbody tr', { hasText: 'build server' }).innerText(), /UTC/, 'last used is shown after the call');

    await page.getByRole('link', { name: 'Revoke build server' }).click();
    await page.waitForURL(/\/user\/api-tokens\/\d+\/delete$/);
    assert.match(await page.locator('main').innerText(), /Revoke the token “build server”\?/);
    await audit(page, 'confirm');
    await page.getByRole('button', { name: 'Revoke token' }).click();
    await page.waitForURL(`${server.url}/user/api-tokens`);
    assert.equal((await page.locator('.flash[role="status"]').innerText()).trim(), 'API token revoked.');
    assert.equal((await callApi(token)).status, 401);
    assert.deepEqual(errors, []);
  });

  it('shows an invalid form inline, tied to the field for screen readers', async () => {
    const { page, errors } = await loggedInPage('ada@example.com');
    await page.goto(`${server.url}/user/api-tokens`);
    await page.getByRole('button', { name: 'Create' }).click();
    await page.waitForLoadState();
    const name = page.getByLabel('Token name');
    assert.equal(await name.getAttribute('aria-invalid'), 'true');
    assert.equal(await page.locator('#field-name-error').innerText(), 'The name field is required.');
    await audit(page, 'invalid');
    // The page itself answers 422, which Chromium reports on the console; nothing else may.
    assert.deepEqual(errors.filter((error) => !/status of 422/.test(error)), []);
  });

  it('works without JavaScript: the token sits in a readonly field the user can select, and no button is shown', async () => {
    const { page } = await loggedInPage('katherine@example.com', { javaScriptEnabled: false });
    await page.goto(`${server.url}/user/api-tokens`);
    await page.getByLabel('Token name').fill('no script');
    await page.getByRole('button', { name: 'Create' }).click();
    await page.waitForURL(`${server.url}/user/api-tokens`);
    const field = page.getByLabel('API token', { exact: true });
    const token = await field.inputValue();
    assert.equal((await callApi(token)).status, 200);
    assert.equal(await field.getAttribute('readonly'), '');
    assert.equal(await page.getByRole('button', { name: 'Copy' }).count(), 0, 'the copy button stays hidden');
    // Selecting the field (as a user would, to copy by hand) takes the whole token.
    await field.selectText();
    const selected = await field.evaluate((input: HTMLInputElement) => input.value.slice(input.selectionStart ?? 0, input.selectionEnd ?? 0));
    assert.equal(selected, token);
  });
});
