// /docs in real Chromium: the Swagger UI from the local package renders every operation under
// the site's CSP (no inline script or style allowed), loads nothing from another origin, and
// "Try it out" reaches the API.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { Browser, Page } from 'playwright-core';
import { launchBrowser, skipWithoutChromium, startServer, type RunningServer } from '../support/browser.js';

describe('/docs in Chromium', { skip: skipWithoutChromium }, () => {
  let server: RunningServer;
  let browser: Browser;
  let page: Page;
  const problems: string[] = [];
  const foreign: string[] = [];

  before(async () => {
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

  it('has no CSP violation, no console error and no request to another origin', async () => {
    const violations = await page.evaluate(() => (globalThis as unknown as { cspViolations: string[] }).cspViolations);
    assert.deepEqual(violations, []);
    assert.deepEqual(problems, []);
    assert.deepEqual(foreign, []);
  });
});
