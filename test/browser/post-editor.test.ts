// The post editor in Chromium (issue 27 §4): the preview shows at once and follows the owner's
// typing, rendered and sanitised exactly as the server renders the body, in the public post's
// styles; the publication time shows its local equivalent and is stored as typed in UTC;
// "View post" opens the public post; "Add translation" opens a prefilled form. axe finds no
// serious or critical violation in light and dark. SCREENSHOT_DIR=… keeps screenshots (1280 and
// 390 px, English and French, light and dark).
import assert from 'node:assert/strict';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { renderMarkdown } from '../../src/modules/posts/markdown.js';
import { keyboardScrollable } from '../../src/modules/posts/post-page.js';
import { createUser } from '../helpers.js';
import { assertAccessibleLightAndDark, launchBrowser, logInWithForm, skipWithoutChromium, startServer, type RunningServer } from '../support/browser.js';

const SHOTS = process.env.SCREENSHOT_DIR;

// Every kind of markup the allowlist decides on: kept tags and attributes, attributes kept on
// one tag and not another, schemes refused, raw HTML with handlers and styles, data: URLs.
const BODY = [
  '# Heading one',
  '',
  'Some **bold**, _em_, ~~gone~~ and `code`; a [link](https://example.com/a "Title") and https://example.org/bare.',
  '',
  '![alt text](/media/picture.png "A title") ![data](data:image/png;base64,iVBORw0KGgo=)',
  '',
  '```js',
  'const x = 1;',
  '```',
  '',
  '| a | b |',
  '|---|---|',
  '| 1 | 2 |',
  '',
  '> quoted',
  '',
  '<div style="color:red" onclick="alert(1)" class="x" title="t">raw <span id="s">html</span></div>',
  '<script>window.pwned = 1</script><iframe src="https://evil.example"></iframe>',
  '<a href="javascript:alert(1)" title="j">js link</a> <a href="data:text/html,<b>x</b>">data link</a> <a href="mailto:a@example.com">mail</a>',
  '<img src="x" alt="" onerror="window.pwned = 2"><img src="data:image/png;base64,AAAA" alt="inline">',
  '<p title="para">titled paragraph</p>',
].join('\n');

describe('the post editor in Chromium', { skip: skipWithoutChromium }, () => {
  let server: RunningServer;
  let browser: Browser;
  const admin = { email: 'mary@example.com', password: 'hidden figures 1961' };

  before(async () => {
    server = await startServer();
    browser = await launchBrowser();
    if (SHOTS !== undefined) mkdirSync(SHOTS, { recursive: true });
    await createUser(server.app, { name: 'Mary Jackson', email: admin.email, password: admin.password, admin: true });
    await createUser(server.app, { name: 'Dorothy Vaughan', admin: true });
  });
  after(async () => {
    await browser?.close();
    await server?.close();
  });

  const signedIn = async (options: { width?: number; timezoneId?: string; javaScriptEnabled?: boolean } = {}): Promise<{ context: BrowserContext; page: Page; errors: string[] }> => {
    const context = await browser.newContext({
      viewport: { width: options.width ?? 1280, height: 900 },
      timezoneId: options.timezoneId ?? 'UTC',
      locale: 'en-GB',
      javaScriptEnabled: options.javaScriptEnabled ?? true,
    });
    const page = await context.newPage();
    page.setDefaultTimeout(20_000);
    const errors: string[] = [];
    page.on('pageerror', (error) => errors.push(error.message));
    // Chromium reports the CSP refusing a handler or a style attribute of a body's raw HTML while
    // DOMPurify parses it (its parsed copy keeps the page's policy); DOMPurify then removes them.
    const refusedByPolicy = /^(Executing inline event handler|Applying inline style) violates the following Content Security Policy/;
    page.on('console', (message) => {
      const text = message.text();
      if (message.type() === 'error' && !text.startsWith('Failed to load resource') && !refusedByPolicy.test(text)) errors.push(text);
    });
    await logInWithForm(page, server.url, '/admin/login', admin.email, admin.password);
    return { context, page, errors };
  };

  /** Full-page shots in light and dark when SCREENSHOT_DIR is set. */
  const shots = async (page: Page, name: string) => {
    if (SHOTS === undefined) return;
    for (const colorScheme of ['light', 'dark'] as const) {
      await page.emulateMedia({ colorScheme });
      await page.evaluate(() => window.scrollTo(0, 0));
      await page.screenshot({ path: join(SHOTS, `post-editor-${name}-${colorScheme}.png`), fullPage: true });
    }
    await page.emulateMedia({ colorScheme: 'light' });
  };

  /** An HTML string as this browser serialises it, so that two renderings compare as markup, not as spelling. */
  const asBrowserHtml = (page: Page, html: string) =>
    page.evaluate((text) => {
      const template = document.createElement('template');
      template.innerHTML = text;
      return template.innerHTML.trim();
    }, html);

  it('previews the body live, exactly as the server renders and sanitises it, in the public post’s styles', async () => {
    const { context, page, errors } = await signedIn();
    await page.goto(`${server.url}/admin/posts/new`);
    const preview = page.locator('#preview');
    assert.ok(await preview.isVisible(), 'the preview shows at once');
    assert.equal(await page.locator('button[data-server-preview]').isVisible(), false, 'no round trip needed');

    await page.getByLabel('Title').fill('Typed live');
    await page.getByLabel('Body').fill('First *words*');
    await page.waitForFunction(() => document.querySelector('[data-preview-body] em')?.textContent === 'words');
    assert.equal(await preview.locator('[data-preview-title]').innerText(), 'Typed live');
    assert.equal(await preview.locator('.post-author').innerText(), 'by Mary Jackson');
    await page.getByLabel('Author').selectOption({ label: 'Dorothy Vaughan' });
    await page.waitForFunction(() => document.querySelector('[data-preview-meta] .post-author')?.textContent === 'by Dorothy Vaughan');
    await page.getByRole('combobox', { name: 'Language' }).selectOption('fr');
    await page.waitForFunction(() => document.querySelector('[data-preview-article]')?.getAttribute('lang') === 'fr');

    await page.getByLabel('Body').fill(BODY);
    await page.waitForFunction(() => document.querySelector('[data-preview-body] table') !== null);
    const live = await preview.locator('[data-preview-body]').innerHTML();
    assert.equal(await asBrowserHtml(page, live), await asBrowserHtml(page, keyboardScrollable(renderMarkdown(BODY))), 'the same HTML as the public page');
    assert.equal(await page.evaluate(() => (window as unknown as { pwned?: number }).pwned), undefined, 'nothing the body holds ran');
    assert.equal(await preview.locator('script, iframe, [onclick], [onerror], [style], a[href^="javascript"], [src^="data:"], a[href^="data:"]').count(), 0);
    await assertAccessibleLightAndDark(page, 'editor with a live preview');
    await shots(page, 'live-preview-en-1280');

    // Saved and published, the public page looks as the preview did.
    await page.getByLabel('Status').selectOption('published');
    await page.getByLabel('Publication time (UTC)').fill('2024-05-06T07:08');
    await page.getByRole('button', { name: 'Create post' }).click();
    await page.waitForURL(/\/admin\/posts\/\d+\/edit$/);
    const looks = (selector: string) =>
      page.locator(selector).first().evaluate((element) => {
        const style = getComputedStyle(element);
        return { fontSize: style.fontSize, lineHeight: style.lineHeight, fontWeight: style.fontWeight };
      });
    const inPreview = { title: await looks('[data-preview-title]'), body: await looks('[data-preview-body]'), heading: await looks('[data-preview-body] h1'), meta: await looks('[data-preview-meta]') };
    const previewMeta = await page.locator('[data-preview-meta]').innerText();
    await page.getByRole('link', { name: 'View post' }).click();
    await page.waitForURL(`${server.url}/blog/typed-live?locale=fr`);
    const onSite = { title: await looks('.blog-post-head h1'), body: await looks('.blog-body'), heading: await looks('.blog-body h1'), meta: await looks('.post-meta') };
    assert.deepEqual(inPreview, onSite);
    assert.equal(await page.locator('.post-meta').innerText(), previewMeta, 'the same date and byline');
    assert.deepEqual(errors, []);
    await context.close();
  });

  it('without JavaScript, the Preview button shows the server’s rendering of the unsaved post', async () => {
    const { context, page } = await signedIn({ javaScriptEnabled: false });
    await page.goto(`${server.url}/admin/posts/new`);
    assert.equal(await page.locator('#preview').isVisible(), false, 'no preview before asking');
    await page.getByLabel('Title').fill('Server side');
    await page.getByLabel('Body').fill('Rendered by **the server**.');
    await page.getByRole('button', { name: 'Preview' }).click();
    await page.waitForURL(`${server.url}/admin/posts#preview`);
    assert.equal(await page.locator('#preview [data-preview-body] strong').innerText(), 'the server');
    assert.equal(await page.locator('#preview [data-preview-title]').innerText(), 'Server side');
    assert.equal(await server.app.services.posts.findAny('server-side'), undefined, 'nothing saved');
    // (axe runs in the page's own scripts: the page with the same preview is checked above, with JavaScript.)
    await context.close();
  });

  it('shows the typed UTC time in the browser’s zone, and stores and shows back what was typed', async () => {
    const { context, page } = await signedIn({ timezoneId: 'Europe/Paris' });
    await page.goto(`${server.url}/admin/posts/new`);
    await page.getByLabel('Title').fill('Summer time');
    const field = page.getByLabel('Publication time (UTC)');
    await field.fill('2026-07-01T10:00');
    const local = page.locator('#field-published_at-local');
    assert.match(await local.innerText(), /^In your time zone \(Europe\/Paris\): Wednesday, July 1, 2026 at 12:00\sPM$/);
    assert.match((await field.getAttribute('aria-describedby')) ?? '', /field-published_at-local/);
    await page.getByRole('button', { name: 'Create post' }).click();
    await page.waitForURL(/\/admin\/posts\/\d+\/edit$/);
    assert.equal(await page.getByLabel('Publication time (UTC)').inputValue(), '2026-07-01T10:00', 'shown back as typed');
    assert.equal((await server.app.services.posts.findAny('summer-time'))?.published_at, '2026-07-01T10:00:00.000Z', 'stored as typed, in UTC');
    await context.close();
  });

  it('"Add translation" opens the form prefilled in the other language; axe is clean on every state, in English and French', async () => {
    const original = await server.app.services.posts.create(null, { title: 'Moon landing', slug: 'moon', body: 'One small step.', status: 'published', published_at: '2024-07-20T20:17:00.000Z' });
    for (const width of [1280, 390]) {
      for (const language of ['en', 'fr'] as const) {
        const { context, page, errors } = await signedIn({ width });
        if (language === 'fr') await page.goto(`${server.url}/locale/fr`);
        await page.goto(`${server.url}/admin/posts/${original.id}/edit`);
        await assertAccessibleLightAndDark(page, `edit ${language} ${width}`);
        await shots(page, `edit-${language}-${width}`);
        if (width === 1280 && language === 'en') {
          await page.getByRole('link', { name: 'Add translation (French)' }).click();
          await page.waitForURL(`${server.url}/admin/posts/new?translate=${original.id}&locale=fr`);
          assert.equal(await page.getByLabel('Slug').inputValue(), 'moon');
          assert.equal(await page.getByRole('combobox', { name: 'Language' }).inputValue(), 'fr');
          assert.equal(await page.getByLabel('Body').inputValue(), 'One small step.');
          assert.equal(await page.locator('#preview article').getAttribute('lang'), 'fr');
          await assertAccessibleLightAndDark(page, 'a translation begun');
          await shots(page, 'translate-en-1280');
          await page.getByLabel('Title').fill('Alunissage');
          await page.getByLabel('Body').fill('Un petit pas.');
          await page.getByRole('button', { name: 'Create post' }).click();
          await page.waitForURL(/\/admin\/posts\/\d+\/edit$/);
          assert.equal((await server.app.services.posts.findAny('moon', 'fr'))?.title, 'Alunissage');
        }
        if (width === 390) {
          // Nothing wider than the phone.
          assert.ok(await page.evaluate(() => document.documentElement.scrollWidth <= window.innerWidth), `no sideways scroll at 390 px (${language})`);
        }
        assert.deepEqual(errors, []);
        await context.close();
      }
    }
  });

});
