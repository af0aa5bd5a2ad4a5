// The code step of a sign-in with two-factor on, in headless Chromium with JavaScript's help for
// nothing: the site and the panel ask for the code after the password (codes computed here from
// the secret), a wrong code is shown inline, the recovery-code form is a link away, the keyboard
// alone gets through, and axe finds no serious or critical violation in light and dark.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { Browser } from 'playwright-core';
import { createUser } from '../helpers.js';
import { launchBrowser, skipWithoutChromium, startServer, type RunningServer, assertAccessibleLightAndDark } from '../support/browser.js';
import { codeAt, enableTwoFactor } from '../support/two-factor-sign-in.js';

describe('two-factor sign-in in Chromium', { skip: skipWithoutChromium }, () => {
  let server: RunningServer;
  let browser: Browser;

  before(async () => {
    server = await startServer();
    browser = await launchBrowser();
  });
  after(async () => {
    await browser?.close();
    await server?.close();
  });

  const newPage = async () => (await browser.newContext({ viewport: { width: 1100, height: 800 } })).newPage();

  const audit = assertAccessibleLightAndDark;

  it('asks the site login for the code, shows a wrong one inline, signs in with the right one; the code step by keyboard alone', async () => {
    const user = await createUser(server.app);
    const { secret, recoveryCodes } = await enableTwoFactor(server.app, user.id);
    const page = await newPage();
    await page.goto(`${server.url}/login`);
    await page.getByLabel('Email').fill(user.email);
    await page.getByLabel('Password').fill(user.plainPassword);
    await page.keyboard.press('Enter');
    await page.waitForURL(`${server.url}/two-factor-challenge`);
    await audit(page, 'site code step');
    // The code field has the focus: typing and Enter are enough.
    await page.keyboard.type('123 45');
    await page.keyboard.press('Enter');
    await page.waitForLoadState();
    assert.equal(await page.locator('#field-code-error').textContent(), 'The provided two-factor code is invalid.');
    await audit(page, 'site code step with an error');
    await page.getByRole('link', { name: 'Use a recovery code' }).click();
    await page.waitForURL(`${server.url}/two-factor-challenge?recovery=1`);
    await audit(page, 'site recovery-code step');
    await page.getByRole('link', { name: 'Use an authentication code' }).click();
    await page.getByLabel('Code', { exact: true }).fill(await codeAt(secret));
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.waitForURL(`${server.url}/dashboard`);
    assert.equal(recoveryCodes.length, 8);
  });

  it('asks the panel login for the code and opens the panel with a recovery code', async () => {
    const admin = await createUser(server.app, { admin: true });
    const { recoveryCodes } = await enableTwoFactor(server.app, admin.id);
    const page = await newPage();
    await page.goto(`${server.url}/admin/login`);
    await page.getByLabel('Email').fill(admin.email);
    await page.getByLabel('Password').fill(admin.plainPassword);
    await page.getByRole('button', { name: 'Log in', exact: true }).click();
    await page.waitForURL(`${server.url}/admin/two-factor-challenge`);
    await audit(page, 'panel code step');
    await page.getByRole('link', { name: 'Use a recovery code' }).click();
    await page.waitForURL(`${server.url}/admin/two-factor-challenge?recovery=1`);
    await audit(page, 'panel recovery-code step');
    await page.getByLabel('Recovery code').fill(recoveryCodes[0]!);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.waitForURL(`${server.url}/admin`);
  });
});
