// Two-factor sign-in set up from the security page in headless Chromium: sign in, open
// Security, Enable (the password confirmed on the way, then the set-up goes on), read the key the
// page shows, confirm with a code computed here, see the recovery codes, sign out, sign in again
// with the password and then the code — the code step by keyboard alone. axe finds no serious or
// critical violation on the security page in each state, light and dark.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { generate } from 'otplib';
import type { Browser, Page } from 'playwright-core';
import { twoFactorEnabled } from '../../src/modules/two-factor/two-factor.service.js';
import { createUser } from '../helpers.js';
import { launchBrowser, skipWithoutChromium, startServer, type RunningServer, assertAccessibleLightAndDark } from '../support/browser.js';

describe('two-factor set-up in Chromium', { skip: skipWithoutChromium }, () => {
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
  };

  it('enables two-factor from the security page, then signs in with the password and a code typed by keyboard alone', async () => {
    const user = await createUser(server.app);
    const page = await (await browser.newContext({ viewport: { width: 1100, height: 800 } })).newPage();
    const errors: string[] = [];
    page.on('pageerror', (error) => errors.push(error.message));

    await logIn(page, user.email, user.plainPassword);
    await page.waitForURL(`${server.url}/dashboard`);
    await page.getByRole('link', { name: 'Security' }).click();
    await page.waitForURL(`${server.url}/security`);
    const section = page.locator('#two-factor');
    await audit(page, 'security, two-factor off');

    // Enable asks for the password first, then goes on by itself: no second press of Enable.
    await section.getByRole('button', { name: 'Enable' }).click();
    await page.waitForURL(`${server.url}/user/confirm-password`);
    await page.getByRole('textbox', { name: 'Password' }).fill(user.plainPassword);
    await page.getByRole('button', { name: 'Confirm' }).click();
    await page.waitForURL(`${server.url}/security#two-factor`);

    await assert.doesNotReject(section.getByRole('img', { name: 'QR code to scan with an authenticator app' }).waitFor());
    const shown = (await section.locator('[data-secret]').textContent()) ?? '';
    assert.match(shown, /^([A-Z2-7]{4} )+[A-Z2-7]{1,4}$/);
    const secret = shown.replace(/ /g, '');
    await audit(page, 'security, set-up under way');

    await section.getByLabel('Code from the app').fill(await generate({ secret }));
    await section.getByRole('button', { name: 'Confirm' }).click();
    await page.waitForURL(`${server.url}/security#two-factor`);
    await page.getByRole('status').filter({ hasText: 'Two-factor sign-in is on.' }).waitFor();
    const codes = await section.locator('.recovery-codes code').allTextContents();
    assert.equal(codes.length, 8);
    assert.ok(twoFactorEnabled((await server.app.services.users.findById(user.id))!));
    await audit(page, 'security, recovery codes shown');

    // The download link gives the same codes as a file.
    const [download] = await Promise.all([page.waitForEvent('download'), section.getByRole('link', { name: 'Download the codes (text file)' }).click()]);
    assert.match(download.suggestedFilename(), /-recovery-codes\.txt$/);

    await page.reload();
    assert.equal(await section.locator('.recovery-codes').count(), 0, 'shown once');
    await audit(page, 'security, two-factor on');

    await page.getByRole('button', { name: 'Log out' }).click();
    await logIn(page, user.email, user.plainPassword);
    await page.waitForURL(`${server.url}/two-factor-challenge`);

    // The code step with the keyboard alone: Tab to the field (when it is not focused already), type, Enter.
    for (let i = 0; i < 15 && (await page.evaluate(() => document.activeElement?.getAttribute('name'))) !== 'code'; i += 1) await page.keyboard.press('Tab');
    assert.equal(await page.evaluate(() => document.activeElement?.getAttribute('name')), 'code');
    // The next step's code: the one confirming the set-up may be this step's, and a code is accepted once.
    await page.keyboard.type(await generate({ secret, epoch: Math.floor(Date.now() / 1000) + 30 }));
    await page.keyboard.press('Enter');
    await page.waitForURL(`${server.url}/dashboard`);
    assert.deepEqual(errors, []);
  });

  it('sets it up on the panel page an administrator is sent to with ADMIN_REQUIRE_2FA, then opens the panel', async () => {
    const panel = await startServer({ ADMIN_REQUIRE_2FA: 'true' });
    try {
      const admin = await createUser(panel.app, { admin: true });
      const page = await (await browser.newContext({ viewport: { width: 1100, height: 800 } })).newPage();
      await page.goto(`${panel.url}/admin/login`);
      await page.getByRole('textbox', { name: 'Email' }).fill(admin.email);
      await page.getByRole('textbox', { name: 'Password' }).fill(admin.plainPassword);
      await page.getByRole('button', { name: 'Log in' }).click();
      await page.waitForURL(`${panel.url}/admin/two-factor`);
      await audit(page, 'panel set-up, begin');
      // Beginning asks for the password (the panel's confirmation); the key is shown after it.
      await page.getByRole('textbox', { name: 'Your current password' }).fill(admin.plainPassword);
      await page.getByRole('button', { name: 'Begin set-up' }).click();
      await page.getByRole('img', { name: 'QR code to scan with an authenticator app' }).waitFor();
      await audit(page, 'panel set-up, QR code');
      const secret = ((await page.locator('[data-secret]').textContent()) ?? '').replace(/ /g, '');
      await page.getByRole('textbox', { name: 'Code from the app' }).fill(await generate({ secret }));
      await page.getByRole('button', { name: 'Confirm' }).click();
      await page.locator('.recovery-codes').waitFor();
      assert.equal(await page.locator('.recovery-codes code').count(), 8);
      await audit(page, 'panel set-up, recovery codes');
      await page.getByRole('link', { name: 'Continue to the panel' }).click();
      await page.waitForURL(`${panel.url}/admin`);
    } finally {
      await panel.close();
    }
  });
});
