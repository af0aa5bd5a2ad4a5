// /docs in real Chromium: the Swagger UI from the local package renders every operation under
// the site's CSP (no inline script or style allowed), loads nothing from another origin, and
// "Try it out" reaches the API. It follows the browser's dark mode and passes axe in both.
import assert from 'node:assert/strict';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { Browser, Page } from 'playwright-core';
import { launchBrowser, seriousA11yViolations, skipWithoutChromium, startServer, type RunningServer } from '../support/browser.js';

const SHOTS = process.env.SCREENSHOT_DIR;
const SWAGGER_MARKUP = new Set(['nested-interactive', 'select-name']);

describe('/docs in Chromium', { skip: skipWithoutChromium }, () => {
  let server: RunningServer;
  let browser: Browser;
  let page: Page;
  const problems: string[] = [];
  const foreign: string[] = [];

  before(async () => {
    if (SHOTS !== undefined) mkdirSync(SHOTS, { recursive: true });
    server = await startServer();
    browser = await launchBrowser();
    page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
    page.on('console', (message) => {
      if (message.type() === 'error') problems.push(`console: ${message.text()}`);
    });
    page.on('pageerror', (error) => problems.push(`page error: ${error.message}`));
    page.on('request', (request) => {
      if (!request.url().startsWith(server.url) && !request.url().startsWith('data:')) foreign.push(request.url());
    });
    // Installed through the DevTools protocol, so the page's own CSP stays as it is.
    await page.addInitScript(() => {
      const seen: string[] = [];
      (globalThis as unknown as { cspViolations: string[] }).cspViolations = seen;
      document.addEventListener('securitypolicyviolation', (event) => seen.push(`${event.violatedDirective} ${event.blockedURI} ${event.sourceFile}:${event.columnNumber}`));
    });
    await page.goto(`${server.url}/docs`);
    await page.waitForSelector('.opblock');
  });
  after(async () => {
    await browser?.close();
    await server?.close();
  });

  it('renders one block per documented operation', async () => {
    const response = await fetch(`${server.url}/api/openapi.json`);
    const doc = (await response.json()) as { paths: Record<string, Record<string, unknown>> };
    const operations = Object.values(doc.paths).reduce((sum, ops) => sum + Object.keys(ops).length, 0);
    assert.equal(await page.locator('.opblock').count(), operations);
    assert.equal(await page.locator('.information-container .title').first().innerText().then((text) => text.startsWith('Tessera API')), true);
  });

  it('shows an operation with its documented error statuses when opened', async () => {
    await page.click('#operations-tokens-postTokens .opblock-summary');
    // The block opens after the click returns; allInnerTexts() does not wait for it.
    const cells = page.locator('#operations-tokens-postTokens .responses-table .response-col_status');
    await cells.first().waitFor({ timeout: 10_000 });
    const statuses = await cells.allInnerTexts();
    for (const status of ['200', '401', '422']) assert.ok(statuses.map((s) => s.trim()).includes(status), `${status} in ${statuses.join(',')}`);
  });

  it('calls the API from "Try it out" (same origin, allowed by the CSP)', async () => {
    const block = '#operations-settings-getSettings';
    await page.click(`${block} .opblock-summary`);
    await page.click(`${block} .try-out__btn`);
    await page.click(`${block} .execute`);
    const status = await page.locator(`${block} .live-responses-table .response .response-col_status`).first().innerText();
    assert.equal(status.trim(), '200');
  });

  it('follows the browser: a dark page with light text when it prefers dark, a light one otherwise', async () => {
    /** The relative luminance (0 black … 1 white) of a computed CSS colour. */
    const luminance = (color: string): number => {
      const [r = 0, g = 0, b = 0] = (color.match(/\d+(\.\d+)?/g) ?? []).map(Number);
      return (0.2126 * r + 0.7152 * g + 0.0722 * b) / 255;
    };
    const colours = () =>
      page.evaluate(() => ({
        background: getComputedStyle(document.body).backgroundColor,
        title: getComputedStyle(document.querySelector('.information-container .title')!).color,
        path: getComputedStyle(document.querySelector('.opblock-summary-path')!).color,
      }));
    try {
      await page.emulateMedia({ colorScheme: 'dark' });
      const dark = await colours();
      assert.ok(luminance(dark.background) < 0.15, `background ${dark.background} is not dark`);
      assert.ok(luminance(dark.title) > 0.7, `title ${dark.title} is not light`);
      assert.ok(luminance(dark.path) > 0.7, `path ${dark.path} is not light`);
      if (SHOTS !== undefined) await page.screenshot({ path: join(SHOTS, 'docs-dark.png') });
    } finally {
      await page.emulateMedia({ colorScheme: 'light' });
    }
    const light = await colours();
    assert.ok(luminance(light.background) > 0.9, `background ${light.background} is not light`);
  });

  it('passes axe in light and dark, with an operation opened', async () => {
    // A fresh load: "Try it out" (opened above) is Swagger UI's own form, outside this check.
    await page.reload();
    await page.waitForSelector('.opblock');
    await page.click('#operations-posts-getPosts .opblock-summary');
    await page.locator('#operations-posts-getPosts .responses-table').first().waitFor({ timeout: 10_000 });
    for (const colorScheme of ['light', 'dark'] as const) {
      await page.emulateMedia({ colorScheme });
      // Left out: two rules about Swagger UI's own markup, which no stylesheet can change. Each
      // operation's summary is a <button> holding the path as an <a> (nested-interactive), and an
      // enum parameter's <select> has no label (select-name). Colours and scrolling are ours.
      const violations = (await seriousA11yViolations(page)).filter((v) => !SWAGGER_MARKUP.has(v.id));
      assert.deepEqual(violations, [], `/docs (${colorScheme})`);
    }
    await page.emulateMedia({ colorScheme: 'light' });
  });

  it('has no CSP violation, no console error and no request to another origin', async () => {
    const violations = await page.evaluate(() => (globalThis as unknown as { cspViolations: string[] }).cspViolations);
    assert.deepEqual(violations, []);
    assert.deepEqual(problems, []);
    assert.deepEqual(foreign, []);
  });
});
