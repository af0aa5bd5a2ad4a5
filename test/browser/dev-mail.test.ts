// The development mailbox in Chromium: ask for a reset link, open /_dev/mail, open the mail,
// follow its link and land on the reset form. Both pages are axe clean in light and dark and
// readable at 390 px; the HTML part shows in its frame with no error in the console (its inline
// styles allowed by the frame's own policy). SCREENSHOT_DIR=… keeps screenshots.
import assert from 'node:assert/strict';
import { mkdirSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { Browser, Page } from 'playwright-core';
import { assertAccessibleLightAndDark, launchBrowser, skipWithoutChromium, startServer, type RunningServer } from '../support/browser.js';
import { t } from '../../src/modules/i18n/translator.js';
import { createUser } from '../helpers.js';

const SHOTS = process.env.SCREENSHOT_DIR;

describe('the development mailbox in Chromium', { skip: skipWithoutChromium }, () => {
  let dir: string;
  let server: RunningServer;
  let browser: Browser;

  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'tessera-dev-mail-'));
    server = await startServer({ MAIL_MAILER: 'log', DATA_DIR: dir });
    browser = await launchBrowser();
    if (SHOTS !== undefined) mkdirSync(SHOTS, { recursive: true });
  });
  after(async () => {
    await browser?.close();
    await server?.close();
    await rm(dir, { recursive: true, force: true });
  });

  /** Axe in light and dark; with SCREENSHOT_DIR, screenshots in both and at 390 px wide. */
  const audit = async (page: Page, name: string) => {
    await assertAccessibleLightAndDark(page, name);
    if (SHOTS === undefined) return;
    for (const colorScheme of ['light', 'dark'] as const) {
      await page.emulateMedia({ colorScheme });
      await page.screenshot({ path: join(SHOTS, `${name}-${colorScheme}.png`), fullPage: true });
    }
    await page.emulateMedia({ colorScheme: 'light' });
    await page.setViewportSize({ width: 390, height: 844 });
    await page.screenshot({ path: join(SHOTS, `${name}-390.png`), fullPage: true });
    await page.setViewportSize({ width: 1100, height: 800 });
  };

  it('lists the reset mail, shows it, and its link leads to the reset form', async () => {
    await createUser(server.app, { email: 'hedy@example.com', password: 'frequency-hopping-1942' });
    const context = await browser.newContext({ viewport: { width: 1100, height: 800 } });
    const page = await context.newPage();
    const errors: string[] = [];
    page.on('pageerror', (error) => errors.push(error.message));
    page.on('console', (message) => {
      if (message.type() === 'error') errors.push(message.text());
    });

    await page.goto(`${server.url}/forgot-password`);
    await page.getByLabel('Email').fill('hedy@example.com');
    await page.getByRole('button', { name: /reset link/i }).click();
    await page.waitForURL(`${server.url}/forgot-password`);
    await server.app.services.mail.settled();

    await page.goto(`${server.url}/_dev/mail`);
    await audit(page, 'dev-mail-list');
    const row = page.getByRole('row').filter({ hasText: 'hedy@example.com' });
    await row.getByRole('link', { name: t('en', 'mail.reset.subject') }).click();
    await page.waitForURL(/\/_dev\/mail\/[0-9T-]+Z-[0-9a-f]{6}$/);
    await page.frameLocator('iframe.dev-mail-frame').getByText(t('en', 'mail.greeting')).waitFor();
    await audit(page, 'dev-mail-show');
    // A full-page screenshot leaves the sandboxed frame (another process) blank: the frame alone.
    if (SHOTS !== undefined) await page.locator('iframe.dev-mail-frame').screenshot({ path: join(SHOTS, 'dev-mail-frame.png') });

    const frameStyle = await page.frameLocator('iframe.dev-mail-frame').locator('a').first().evaluate((a) => getComputedStyle(a).backgroundColor);
    assert.equal(frameStyle, 'rgb(58, 75, 216)', "the mail's inline styles apply in its frame");

    await page.getByRole('list').getByRole('link', { name: /\/reset-password\// }).click();
    await page.waitForURL(/\/reset-password\/[A-Za-z0-9_-]+\?email=hedy%40example\.com$/);
    assert.equal(await page.getByLabel('Email').inputValue(), 'hedy@example.com');
    assert.deepEqual(errors, []);
    await context.close();
  });
});
