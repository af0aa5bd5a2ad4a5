// The security page's browser sessions in headless Chromium: one user signed in from two browser
// contexts (a Mac with Chrome, a Linux box with Firefox); the first ends the other from the
// security page with the keyboard alone, confirming its password on the way (the ending goes on
// by itself once confirmed), and the other is signed out. Then an account deleted through its
// confirmation page. axe finds no serious or critical violation in light and dark.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { Browser, Page } from 'playwright-core';
import { createUser } from '../helpers.js';
import { launchBrowser, skipWithoutChromium, startServer, type RunningServer, assertAccessibleLightAndDark } from '../support/browser.js';

const LINUX_FIREFOX = 'Mozilla/5.0 (X11; Linux x86_64; rv:133.0) Gecko/20100101 Firefox/133.0';
const MAC_CHROME = 'Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_7) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36';

describe('browser sessions in Chromium', { skip: skipWithoutChromium }, () => {
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

  const audit = assertAccessibleLightAndDark;

  const logIn = async (page: Page, email: string, password: string) => {
    await page.goto(`${server.url}/login`);
    await page.getByLabel('Email').fill(email);
    await page.getByLabel('Password').fill(password);
    await page.getByRole('button', { name: 'Log in' }).click();
    await page.waitForURL(`${server.url}/dashboard`);
  };

  /** Presses Tab until the focused element matches `test` (at most 80 presses). */
  const tabTo = async (page: Page, test: string) => {
    const focused = () => page.evaluate(() => `${document.activeElement?.getAttribute('aria-label') ?? ''}|${document.activeElement?.getAttribute('name') ?? ''}`);
    for (let i = 0; i < 80 && !(await focused()).includes(test); i += 1) await page.keyboard.press('Tab');
    assert.ok((await focused()).includes(test), `Tab reaches ${test}`);
  };

  it('ends the other browser session from the security page with the keyboard alone', async () => {
    const user = await createUser(server.app);
    const mac = await (await browser.newContext({ userAgent: MAC_CHROME, viewport: { width: 1100, height: 800 } })).newPage();
    const linux = await (await browser.newContext({ userAgent: LINUX_FIREFOX })).newPage();
    const errors: string[] = [];
    mac.on('pageerror', (error) => errors.push(error.message));
    await logIn(mac, user.email, user.plainPassword);
    await logIn(linux, user.email, user.plainPassword);

    await mac.goto(`${server.url}/security`);
    const section = mac.locator('section.browser-sessions');
    const rows = section.locator('tbody tr');
    assert.equal(await rows.count(), 2);
    assert.match((await rows.nth(0).textContent()) ?? '', /Chrome on macOS[\s\S]*This device/);
    assert.match((await rows.nth(1).textContent()) ?? '', /Firefox on Linux/);
    await audit(mac, 'security page with two sessions');

    // End → the password confirmation → the session asked for is ended, with no second press.
    await tabTo(mac, 'End the session of Firefox on Linux');
    await mac.keyboard.press('Enter');
    await mac.waitForURL(`${server.url}/user/confirm-password`);
    await tabTo(mac, '|password');
    await mac.keyboard.type(user.plainPassword);
    await mac.keyboard.press('Enter');
    await mac.getByRole('status').filter({ hasText: 'That browser session has been ended.' }).waitFor();
    assert.equal(mac.url(), `${server.url}/security`);
    assert.equal(await rows.count(), 1);
    assert.equal(await section.getByRole('button', { name: 'Log out other browser sessions' }).count(), 0);
    await audit(mac, 'security page after ending the other session');

    // The other browser is signed out.
    await linux.goto(`${server.url}/dashboard`);
    await linux.waitForURL(`${server.url}/login`);
    await mac.goto(`${server.url}/dashboard`);
    assert.equal(mac.url(), `${server.url}/dashboard`, 'this one stays signed in');
    assert.deepEqual(errors, []);
  });

  it('deletes the account from the security page through its confirmation page', async () => {
    const user = await createUser(server.app);
    const page = await (await browser.newContext({ viewport: { width: 1100, height: 800 } })).newPage();
    await logIn(page, user.email, user.plainPassword);
    await page.goto(`${server.url}/security`);
    await page.locator('section.delete-account').getByRole('link', { name: 'Delete account' }).click();
    await page.waitForURL(`${server.url}/user/confirm-password`);
    await page.getByRole('textbox', { name: 'Password' }).fill(user.plainPassword);
    await page.getByRole('button', { name: 'Confirm' }).click();
    await page.waitForURL(`${server.url}/user/delete`);
    await audit(page, 'delete account confirmation page');
    await page.getByRole('button', { name: 'Delete my account for good' }).click();
    await page.waitForURL(`${server.url}/`);
    await page.getByRole('status').filter({ hasText: 'Your account has been deleted.' }).waitFor();
    assert.equal(await server.app.services.users.findById(user.id), undefined);
    await page.goto(`${server.url}/dashboard`);
    await page.waitForURL(`${server.url}/login`);
  });
});
