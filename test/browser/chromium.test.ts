// The browser the suite drives (launchBrowser in support/browser.ts): Playwright's own disabled
// features kept, and no WebUI page of Chromium's own beside the test's pages. Chromium preloads
// the address bar's popup as a WebUI renderer that headless never shows; left on, it kept 0.6
// of a core busy while a test's page sat idle, a quarter to a third of a browser file's CPU on
// this 2-core machine. A Chromium that renames the feature brings it back: this fails then.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { Browser } from 'playwright-core';
import { browserCommandLines, droppedFeatures, hasProc, launchBrowser, skipWithoutChromium } from '../support/browser.js';

describe('the suite’s Chromium', { skip: skipWithoutChromium }, () => {
  let browser: Browser;

  before(async () => {
    browser = await launchBrowser();
  });
  after(async () => {
    await browser?.close();
  });

  it('finds the features a later --disable-features would turn back on', () => {
    assert.deepEqual(droppedFeatures(['chromium', '--disable-features=A,B,C', '--headless', '--disable-features=A,C,D']), ['B']);
    assert.deepEqual(droppedFeatures(['chromium', '--disable-features=A,B', '--disable-features=B,A,E']), []);
    assert.deepEqual(droppedFeatures(['chromium', '--disable-features=A']), []);
  });

  it('keeps every feature Playwright turns off, and turns off the address bar’s popup', { skip: hasProc ? false : 'no /proc to read the command line from' }, () => {
    const lines = browserCommandLines();
    assert.ok(lines.length >= 1, 'the launched browser is found among this process’s descendants');
    for (const args of lines) {
      assert.deepEqual(droppedFeatures(args), []);
      const effective = args.filter((arg) => arg.startsWith('--disable-features=')).at(-1) ?? '';
      assert.match(effective, /\bPaintHolding\b/, 'a feature of Playwright’s list');
      assert.match(effective, /\bWebUIOmniboxPopup\b/);
    }
  });

  it('runs no WebUI page of its own beside a test’s page', async () => {
    const context = await browser.newContext();
    try {
      const page = await context.newPage();
      await page.setContent('<main><h1>A page</h1></main>');
      const session = await browser.newBrowserCDPSession();
      const { targetInfos } = await session.send('Target.getTargets', { filter: [{}] });
      await session.detach();
      assert.ok(targetInfos.some((target) => target.type === 'page'), 'the test’s page is listed');
      assert.deepEqual(
        targetInfos.filter((target) => target.url.startsWith('chrome://')).map((target) => `${target.type} ${target.url}`),
        [],
      );
    } finally {
      await context.close();
    }
  });
});
