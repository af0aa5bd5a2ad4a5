// Page geometry in headless Chromium at 1280 px: every account page (dashboard, profile,
// security, API tokens and a revocation step, the password confirmation, account deletion, email
// verification) puts its content in one column of the same width and left edge, the
// --account-width of app.css; the panel's login card is centred under the header, left and right
// margins equal within a pixel, top and bottom too. axe clean in light and dark.
// SCREENSHOT_DIR=… keeps screenshots.
import assert from 'node:assert/strict';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { Browser, Page } from 'playwright-core';
import { createUser } from '../helpers.js';
import { assertAccessibleLightAndDark, launchBrowser, logInWithForm, screenshotLightAndDark, skipWithoutChromium, startServer, type RunningServer } from '../support/browser.js';

const SHOTS = process.env.SCREENSHOT_DIR;
const DESKTOP = { width: 1280, height: 860 };

type Box = { left: number; width: number };

describe('page layout at 1280 px in Chromium', { skip: skipWithoutChromium }, () => {
  let server: RunningServer;
  let browser: Browser;

  before(async () => {
    server = await startServer({ MUST_VERIFY_EMAIL: 'true' });
    browser = await launchBrowser();
    if (SHOTS !== undefined) mkdirSync(SHOTS, { recursive: true });
  });
  after(async () => {
    await browser?.close();
    await server?.close();
  });

  const newPage = async (): Promise<Page> => (await browser.newContext({ viewport: DESKTOP })).newPage();


  /** The box of the page's first card (every account page has one), and the column width in px. */
  const contentBox = (page: Page) =>
    page.evaluate(() => {
      const card = document.querySelector('main .card');
      if (card === null) return null;
      const rect = card.getBoundingClientRect();
      const probe = document.createElement('div');
      probe.style.width = 'var(--account-width)';
      document.body.append(probe);
      const column = probe.getBoundingClientRect().width;
      probe.remove();
      return { box: { left: rect.left, width: rect.width } satisfies Box, column };
    });

  it('gives every account page the same content width and left edge', async () => {
    const user = await createUser(server.app, { name: 'Mary Jackson', email: 'mary@example.com', verified: true });
    const token = await server.app.services.tokens.issue(user.id, 'wind tunnel', ['posts:read']);
    const page = await newPage();
    await logInWithForm(page, server.url, '/login', user.email, user.plainPassword);

    const boxes: [string, Box][] = [];
    const measure = async (path: string, name: string) => {
      if (new URL(page.url()).pathname !== path) await page.goto(`${server.url}${path}`);
      assert.equal(new URL(page.url()).pathname, path, `${path} opened`);
      const measured = await contentBox(page);
      assert.ok(measured !== null, `${path} has a card`);
      assert.ok(measured.column > 600, `--account-width is set (${measured.column}px)`);
      assert.ok(Math.abs(measured.box.width - measured.column) < 0.5, `${path}: the card is the column's width (${measured.box.width} vs ${measured.column})`);
      boxes.push([path, measured.box]);
      await assertAccessibleLightAndDark(page, `${path} at 1280 px`);
      await screenshotLightAndDark(page, SHOTS, `layout-${name}`);
    };

    await measure('/dashboard', 'dashboard');
    await measure('/profile', 'profile');
    await measure('/security', 'security');
    await measure('/user/api-tokens', 'api-tokens');
    await measure(`/user/api-tokens/${token.id}/delete`, 'api-token-revoke');
    await measure('/user/confirm-password', 'confirm-password');
    // Account deletion asks for the password first, then shows its confirmation page.
    await page.goto(`${server.url}/user/delete`);
    await page.waitForURL(`${server.url}/user/confirm-password`);
    await page.getByLabel('Password', { exact: true }).fill(user.plainPassword);
    await page.getByRole('button', { name: 'Confirm', exact: true }).click();
    await page.waitForURL(`${server.url}/user/delete`);
    await measure('/user/delete', 'delete-account');

    const unverified = await createUser(server.app, { name: 'Dorothy Vaughan', verified: false });
    const other = await newPage();
    await logInWithForm(other, server.url, '/login', unverified.email, unverified.plainPassword);
    await other.goto(`${server.url}/email/verify`);
    const verify = await contentBox(other);
    assert.ok(verify !== null);
    boxes.push(['/email/verify', verify.box]);

    const [first] = boxes;
    assert.ok(first !== undefined);
    for (const [path, box] of boxes) {
      assert.ok(Math.abs(box.width - first[1].width) < 0.5 && Math.abs(box.left - first[1].left) < 0.5, `${path}: ${JSON.stringify(box)} vs ${first[0]}: ${JSON.stringify(first[1])}`);
    }
  });

  it("centres the panel's login card under the header", async () => {
    const page = await newPage();
    await page.goto(`${server.url}/admin/login`);
    const geometry = await page.evaluate(() => {
      const card = document.querySelector('main .card')!.getBoundingClientRect();
      const header = document.querySelector('header')!.getBoundingClientRect();
      return { left: card.left, right: window.innerWidth - card.right, above: card.top - header.bottom, below: window.innerHeight - card.bottom, width: card.width };
    });
    assert.ok(geometry.width < DESKTOP.width / 2, `a card, not the whole width (${geometry.width}px)`);
    assert.ok(Math.abs(geometry.left - geometry.right) <= 1, `left and right margins: ${geometry.left} and ${geometry.right}`);
    assert.ok(geometry.above > 0 && geometry.below > 0, `the card fits under the header (${geometry.above}, ${geometry.below})`);
    assert.ok(Math.abs(geometry.above - geometry.below) <= 1, `space above and below: ${geometry.above} and ${geometry.below}`);
    await assertAccessibleLightAndDark(page, 'panel login at 1280 px');
    await screenshotLightAndDark(page, SHOTS, 'layout-admin-login');
    await page.setViewportSize({ width: 390, height: 844 });
    const narrow = await page.evaluate(() => {
      const card = document.querySelector('main .card')!.getBoundingClientRect();
      return { left: card.left, right: window.innerWidth - card.right };
    });
    assert.ok(narrow.left >= 0 && Math.abs(narrow.left - narrow.right) <= 1, `centred at 390 px too: ${JSON.stringify(narrow)}`);
    if (SHOTS !== undefined) await page.screenshot({ path: join(SHOTS, 'layout-admin-login-narrow.png'), fullPage: true });
  });
});
