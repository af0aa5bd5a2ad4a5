// The blog in Chromium: the home page, /blog and a post pass axe in light and dark, stay
// readable at 390 px (no sideways scroll, even with a long code block, a wide table and a long
// URL in the body), every link of the list and the post is reached with the keyboard, and no
// request leaves the site. SCREENSHOT_DIR=… keeps screenshots (light, dark, 390 px).
import assert from 'node:assert/strict';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { Browser, Page } from 'playwright-core';
import { assertAccessibleLightAndDark, launchBrowser, skipWithoutChromium, startServer, type RunningServer } from '../support/browser.js';

const SHOTS = process.env.SCREENSHOT_DIR;
const HOUR = 3_600_000;

const WIDE_BODY = [
  'A post with everything that could widen a page on a phone.',
  '',
  '```sh',
  `curl -H "Authorization: Bearer $TOKEN" -H "Accept: application/json" "http://127.0.0.1:3000/api/posts?locale=en&status=published&page=1&per_page=100&${'x'.repeat(80)}"`,
  '```',
  '',
  '| Column one | Column two | Column three | Column four | Column five | Column six | Column seven |',
  '| --- | --- | --- | --- | --- | --- | --- |',
  '| a-rather-long-cell-value | another-long-cell-value | and-a-third-long-value | fourth-value-here | fifth-value-here | sixth-value-here | seventh-value-here |',
  '',
  `A bare link: http://127.0.0.1/${'very-long-path-segment-'.repeat(8)}end and a word: ${'Donaudampfschifffahrtsgesellschaftskapitän'.repeat(2)}.`,
  '',
  'Some `inline code that is rather long and should wrap when it must`, **bold** and *emphasis*.',
].join('\n');

describe('the blog in Chromium', { skip: skipWithoutChromium }, () => {
  let server: RunningServer;
  let browser: Browser;
  let page: Page;
  const foreign: string[] = [];
  const problems: string[] = [];

  before(async () => {
    if (SHOTS !== undefined) mkdirSync(SHOTS, { recursive: true });
    server = await startServer();
    const { services } = server.app;
    await services.settings.put('posts_per_page', 4, true);
    const author = await services.users.create({ name: 'Grace Hopper', email: 'grace@example.com', password: 'a long enough password', verified: true, admin: false });
    for (let i = 1; i <= 6; i += 1) {
      await services.posts.create(author.id, {
        title: `Notes from the workshop, part ${i}`,
        slug: `notes-${i}`,
        excerpt: `What happened in the workshop during week ${i}, and what we learned from it.`,
        body: `## Week ${i}\n\nPlain notes.`,
        locale: 'en',
        status: 'published',
        published_at: new Date(Date.now() - (10 - i) * HOUR).toISOString(),
      });
    }
    await services.posts.create(author.id, {
      title: 'A very long title for a post about wide things that must still fit on a small phone screen',
      slug: 'wide',
      excerpt: `An excerpt with a long URL http://127.0.0.1/${'segment-'.repeat(12)} inside.`,
      body: WIDE_BODY,
      locale: 'en',
      status: 'published',
      published_at: new Date(Date.now() - HOUR).toISOString(),
    });
    await services.posts.create(author.id, {
      title: 'Notes de l’atelier, sixième partie',
      slug: 'notes-6',
      excerpt: 'Ce qui s’est passé à l’atelier pendant la sixième semaine.',
      body: '## Semaine 6\n\nDes notes, en français.',
      locale: 'fr',
      status: 'published',
      published_at: new Date(Date.now() - 2 * HOUR).toISOString(),
    });
    browser = await launchBrowser();
    page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
    page.on('request', (request) => {
      const url = request.url();
      if (!url.startsWith(`${server.url}/`) && !url.startsWith('data:')) foreign.push(url);
    });
    page.on('pageerror', (error) => problems.push(error.message));
    page.on('console', (message) => {
      if (message.type() === 'error') problems.push(message.text());
    });
  });
  after(async () => {
    await browser?.close();
    await server?.close();
  });

  /** axe in light and dark, then the page at 390 px: no sideways scroll; screenshots of each when asked. */
  const check = async (name: string) => {
    await page.evaluate(() => (document.activeElement as HTMLElement | null)?.blur());
    await assertAccessibleLightAndDark(page, name);
    for (const colorScheme of ['light', 'dark'] as const) {
      await page.emulateMedia({ colorScheme });
      if (SHOTS !== undefined) await page.screenshot({ path: join(SHOTS, `blog-${name}-${colorScheme}.png`), fullPage: true });
    }
    await page.emulateMedia({ colorScheme: 'light' });
    await page.setViewportSize({ width: 390, height: 844 });
    const width = await page.evaluate(() => ({ page: document.documentElement.scrollWidth, screen: window.innerWidth }));
    assert.ok(width.page <= width.screen, `${name}: no sideways scroll at 390 px (${width.page} > ${width.screen})`);
    await assertAccessibleLightAndDark(page, `${name} at 390 px`);
    if (SHOTS !== undefined) {
      await page.screenshot({ path: join(SHOTS, `blog-${name}-390.png`), fullPage: true });
      await page.emulateMedia({ colorScheme: 'dark' });
      await page.screenshot({ path: join(SHOTS, `blog-${name}-390-dark.png`), fullPage: true });
      await page.emulateMedia({ colorScheme: 'light' });
    }
    await page.setViewportSize({ width: 1280, height: 900 });
  };

  /** The hrefs focused, in order, by pressing Tab from the top of the page until it leaves the last link. */
  const tabOrder = async (): Promise<string[]> => {
    await page.evaluate(() => (document.activeElement as HTMLElement | null)?.blur());
    const links = await page.locator('a[href]').count();
    const seen: string[] = [];
    for (let i = 0; i < links + 5; i += 1) {
      await page.keyboard.press('Tab');
      const href = await page.evaluate(() => document.activeElement?.getAttribute('href') ?? null);
      if (href !== null) seen.push(href);
    }
    return seen;
  };

  it('shows the home page with the newest posts and links to the blog and the API documentation', async () => {
    await page.goto(`${server.url}/`);
    const titles = await page.locator('.home-latest .post-item-title').allInnerTexts();
    assert.equal(titles.length, 4);
    assert.match(titles[0] ?? '', /^A very long title/);
    assert.equal(await page.getByRole('link', { name: 'Read the API documentation' }).getAttribute('href'), '/docs');
    assert.equal(await page.getByRole('link', { name: 'All posts' }).getAttribute('href'), '/blog');
    await check('home');
  });

  it('lists the posts a page at a time, every link reachable with the keyboard', async () => {
    await page.goto(`${server.url}/blog`);
    assert.equal(await page.locator('.post-item').count(), 4);
    assert.equal((await page.locator('.blog-pager p').innerText()).trim(), 'Page 1 of 2');
    const order = await tabOrder();
    for (const href of ['/blog', '/blog/wide', '/blog/notes-6', '/blog/notes-5', '/blog/notes-4', '/blog?page=2']) assert.ok(order.includes(href), `${href} in ${order.join(' ')}`);
    assert.ok(order.indexOf('/blog/wide') < order.indexOf('/blog?page=2'), 'the posts come before the pager');
    await check('list');
    await page.getByRole('link', { name: 'Older posts' }).click();
    await page.waitForURL(`${server.url}/blog?page=2`);
    assert.equal((await page.locator('.blog-pager p').innerText()).trim(), 'Page 2 of 2');
    await check('list-page-2');
  });

  it('shows a post with a wide code block, table and URL without widening the page', async () => {
    await page.goto(`${server.url}/blog/wide`);
    assert.equal(await page.locator('article.blog-post').getAttribute('lang'), 'en');
    assert.match(await page.locator('article.blog-post time').innerText(), /\d{4}/);
    // The code block and the table scroll inside themselves.
    await page.setViewportSize({ width: 390, height: 844 });
    for (const selector of ['.blog-body pre', '.blog-body table']) {
      const box = await page.locator(selector).evaluate((element) => ({ scroll: element.scrollWidth, client: element.clientWidth }));
      assert.ok(box.scroll > box.client, `${selector} scrolls inside itself at 390 px`);
    }
    await page.setViewportSize({ width: 1280, height: 900 });
    const order = await tabOrder();
    for (const href of ['/blog/notes-6', '/blog']) assert.ok(order.includes(href), `${href} in ${order.join(' ')}`);
    await check('post');
    await page.getByRole('link', { name: /Previous post/ }).click();
    await page.waitForURL(`${server.url}/blog/notes-6`);
    assert.equal(await page.getByRole('link', { name: /Next post/ }).getAttribute('href'), '/blog/wide');
    await check('post-middle');
    // Its French translation, one link away; in French, it links back to the English one.
    await page.getByRole('link', { name: 'français' }).click();
    await page.waitForURL(`${server.url}/blog/notes-6?locale=fr`);
    assert.equal(await page.locator('article.blog-post').getAttribute('lang'), 'fr');
    assert.equal(await page.getByRole('link', { name: 'English' }).getAttribute('href'), '/blog/notes-6');
    await check('post-translation');
  });

  it('loaded nothing from elsewhere and met no script error', () => {
    assert.deepEqual(foreign, []);
    assert.deepEqual(problems, []);
  });
});
