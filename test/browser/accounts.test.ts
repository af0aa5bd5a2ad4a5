// The account pages in headless Chromium, with a real SMTP server on loopback: register →
// verify by the mailed link → profile; forgot → mailed link → reset → login; a failed login
// shows its message; axe-core finds no serious or critical violation on any page, in light and
// dark; the login form works with the keyboard alone. SCREENSHOT_DIR=… keeps screenshots.
import assert from 'node:assert/strict';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { Browser, Page } from 'playwright-core';
import { launchBrowser, seriousA11yViolations, skipWithoutChromium, startServer, type RunningServer } from '../support/browser.js';
import { linkIn, startMailServer, type MailServer } from '../web/mail-server.js';

const SHOTS = process.env.SCREENSHOT_DIR;

describe('account pages in Chromium', { skip: skipWithoutChromium }, () => {
  let mail: MailServer;
  let server: RunningServer;
  let browser: Browser;
  const checked = new Set<string>();

  before(async () => {
    mail = await startMailServer();
    server = await startServer({ ...mail.env, MUST_VERIFY_EMAIL: 'true' });
    browser = await launchBrowser();
    if (SHOTS !== undefined) mkdirSync(SHOTS, { recursive: true });
  });
  after(async () => {
    await browser?.close();
    await server?.close();
    await mail?.close();
  });

  const newPage = async () => {
    const context = await browser.newContext({ viewport: { width: 1100, height: 800 } });
    const page = await context.newPage();
    const errors: string[] = [];
    page.on('pageerror', (error) => errors.push(error.message));
    page.on('console', (message) => {
      if (message.type() === 'error') errors.push(message.text());
    });
    return { page, errors };
  };

  /** Runs axe in light and in dark mode (and keeps screenshots when asked). */
  const audit = async (page: Page, name: string) => {
    for (const colorScheme of ['light', 'dark'] as const) {
      await page.emulateMedia({ colorScheme });
      assert.deepEqual(await seriousA11yViolations(page), [], `${name} (${colorScheme})`);
      if (SHOTS !== undefined) {
        await page.screenshot({ path: join(SHOTS, `${name}-${colorScheme}.png`), fullPage: true });
        if (colorScheme === 'light') {
          await page.setViewportSize({ width: 380, height: 800 });
          await page.screenshot({ path: join(SHOTS, `${name}-narrow.png`), fullPage: true });
          await page.setViewportSize({ width: 1100, height: 800 });
        }
      }
    }
    await page.emulateMedia({ colorScheme: 'light' });
    checked.add(name);
  };

  const waitForMail = async (address: string, count = 1) => {
    for (let i = 0; i < 100 && mail.to(address).length < count; i += 1) await server.app.services.mail.settled().then(() => new Promise((r) => setTimeout(r, 20)));
    const messages = mail.to(address);
    assert.ok(messages.length >= count, `mail to ${address}`);
    return messages[count - 1]!;
  };

  it('registers, verifies the address through the mailed link, then opens and edits the profile', async () => {
    const { page, errors } = await newPage();
    await page.goto(`${server.url}/register`);
    await audit(page, 'register');
    await page.getByLabel('Name').fill('Margaret Hamilton');
    await page.getByLabel('Email').fill('margaret@example.com');
    await page.getByLabel('Password', { exact: true }).fill('apollo-guidance-11');
    await page.getByLabel('Confirm password').fill('apollo-guidance-11');
    await page.getByRole('button', { name: 'Register' }).click();
    await page.waitForURL(`${server.url}/dashboard`);
    // Breeze's banner: the address is not verified yet, and a button sends the link again.
    assert.match(await page.locator('[data-unverified-banner]').innerText(), /margaret@example\.com, is not verified yet/);
    await page.locator('[data-unverified-banner]').getByRole('button', { name: 'Resend the link' }).waitFor();
    await audit(page, 'dashboard');

    await page.goto(`${server.url}/profile`);
    await page.waitForURL(`${server.url}/email/verify`);
    assert.match(await page.locator('main').innerText(), /open the link we send to it/);
    await audit(page, 'verify-notice');

    const link = linkIn(await waitForMail('margaret@example.com'), `${server.url}/email/verify/`);
    await page.goto(link);
    await page.waitForURL(`${server.url}/dashboard`);
    assert.equal((await page.getByRole('status').innerText()).trim(), 'Your email address has been verified.');

    await page.getByRole('link', { name: 'Profile' }).click();
    await page.waitForURL(`${server.url}/profile`);
    await audit(page, 'profile');
    await page.getByLabel('Name').fill('Margaret H. Hamilton');
    await page.getByRole('button', { name: 'Save' }).first().click();
    await page.waitForURL(`${server.url}/profile`);
    assert.equal((await page.getByRole('status').innerText()).trim(), 'Saved.');
    assert.equal(await page.getByLabel('Name').inputValue(), 'Margaret H. Hamilton');
    assert.deepEqual(errors, []);
  });

  it('resets a forgotten password through the mailed link, then logs in with the new one', async () => {
    await server.app.services.users.create({ name: 'Dorothy Vaughan', email: 'dorothy@example.com', password: 'fortran-old-password', verified: true });
    const { page, errors } = await newPage();
    await page.goto(`${server.url}/login`);
    await page.getByRole('link', { name: 'Forgot your password?' }).click();
    await page.waitForURL(`${server.url}/forgot-password`);
    await audit(page, 'forgot-password');
    await page.getByLabel('Email').fill('dorothy@example.com');
    await page.getByRole('button', { name: 'Email password reset link' }).click();
    await page.waitForURL(`${server.url}/forgot-password`);
    assert.match(await page.getByRole('status').innerText(), /If an account exists for that email address/);

    const link = linkIn(await waitForMail('dorothy@example.com'), `${server.url}/reset-password/`);
    await page.goto(link);
    assert.equal(await page.getByLabel('Email').inputValue(), 'dorothy@example.com');
    await audit(page, 'reset-password');
    await page.getByLabel('Password', { exact: true }).fill('fortran-new-password');
    await page.getByLabel('Confirm password').fill('fortran-new-password');
    await page.getByRole('button', { name: 'Reset password' }).click();
    await page.waitForURL(`${server.url}/login`);
    assert.equal((await page.getByRole('status').innerText()).trim(), 'Your password has been reset.');
    await audit(page, 'login-after-reset');

    await page.getByLabel('Email').fill('dorothy@example.com');
    await page.getByLabel('Password').fill('fortran-new-password');
    await page.getByRole('button', { name: 'Log in' }).click();
    await page.waitForURL(`${server.url}/dashboard`);
    assert.deepEqual(errors, []);
  });

  it('shows the failure message on the email field, tied to it for screen readers', async () => {
    await server.app.services.users.create({ name: 'Annie Easley', email: 'annie@example.com', password: 'centaur-rocket-1', verified: true });
    const { page } = await newPage();
    await page.goto(`${server.url}/login`);
    await audit(page, 'login');
    await page.getByLabel('Email').fill('annie@example.com');
    await page.getByLabel('Password').fill('not-her-password');
    await page.getByRole('button', { name: 'Log in' }).click();
    await page.waitForLoadState();
    assert.equal(page.url(), `${server.url}/login`);
    const email = page.getByLabel('Email');
    assert.equal(await email.getAttribute('aria-invalid'), 'true');
    const describedBy = await email.getAttribute('aria-describedby');
    assert.equal((await page.locator(`#${describedBy}`).innerText()).trim(), 'These credentials do not match our records.');
    assert.equal(await email.inputValue(), 'annie@example.com');
    await audit(page, 'login-failed');
  });

  it('logs in with the keyboard alone: Tab to each field, Space for the checkbox, Enter on the button', async () => {
    await server.app.services.users.create({ name: 'Mary Jackson', email: 'mary@example.com', password: 'wind-tunnel-42', verified: true });
    const { page } = await newPage();
    await page.goto(`${server.url}/login`);
    const focused = () => page.evaluate(() => document.activeElement?.id || document.activeElement?.textContent?.trim() || '');

    await page.keyboard.press('Tab');
    assert.equal(await focused(), 'Skip to content', 'the skip link comes first');
    await page.keyboard.press('Enter');
    let presses = 0;
    while ((await focused()) !== 'field-email' && presses < 10) {
      await page.keyboard.press('Tab');
      presses += 1;
    }
    assert.equal(await focused(), 'field-email', 'Tab reaches the email field');
    assert.ok(presses <= 2, `the skip link lands next to the form (${presses} Tabs)`);
    await page.keyboard.type('mary@example.com');
    await page.keyboard.press('Tab');
    assert.equal(await focused(), 'field-password');
    await page.keyboard.type('wind-tunnel-42');
    await page.keyboard.press('Tab');
    assert.equal(await focused(), 'field-remember');
    await page.keyboard.press('Space');
    assert.equal(await page.getByLabel('Remember me').isChecked(), true);
    await page.keyboard.press('Tab');
    assert.equal(await focused(), 'Forgot your password?');
    await page.keyboard.press('Tab');
    assert.equal(await focused(), 'Log in');
    await page.keyboard.press('Enter');
    await page.waitForURL(`${server.url}/dashboard`);
    const cookies = await page.context().cookies();
    assert.ok(cookies.some((cookie) => cookie.name === 'tessera_remember' && cookie.httpOnly));
  });

  it('passes axe on the error pages', async () => {
    const { page } = await newPage();
    const missing = await page.goto(`${server.url}/no-such-page`);
    assert.equal(missing?.status(), 404);
    await audit(page, 'error-404');
    await page.goto(`${server.url}/login`);
    // A form whose token went stale (another tab logged out): the 419 page.
    await page.evaluate(() => {
      const input = document.querySelector<HTMLInputElement>('input[name="_token"]');
      if (input !== null) input.value = 'stale-token';
    });
    await page.getByLabel('Email').fill('someone@example.com');
    await page.getByLabel('Password').fill('some-password');
    const [response] = await Promise.all([page.waitForResponse(`${server.url}/login`), page.getByRole('button', { name: 'Log in' }).click()]);
    assert.equal(response.status(), 419);
    assert.match(await page.locator('main').innerText(), /Page expired/);
    await audit(page, 'error-419');
  });

  it('audited every account page', () => {
    for (const name of ['login', 'login-failed', 'register', 'forgot-password', 'reset-password', 'verify-notice', 'dashboard', 'profile', 'error-404', 'error-419']) {
      assert.ok(checked.has(name), name);
    }
  });
});
