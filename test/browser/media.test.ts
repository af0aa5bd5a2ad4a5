// Images in Chromium: an administrator uploads an image in the post editor (the file input, and a
// file dropped on the body), its markdown goes into the body, the published post shows the image
// under the site's CSP (img-src 'self'); a disguised file (HTML or a script named .png) is refused
// in the editor and in the library; the library lists the uploads and warns before deleting one a
// post shows. axe-core finds no serious violation on the library and the confirmation, in light
// and dark. SCREENSHOT_DIR=… keeps screenshots (1280 and 390 px, English and French).
import assert from 'node:assert/strict';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { Browser, Page } from 'playwright-core';
import sharp from 'sharp';
import { createAdminByCli, type Admin } from '../admin/support.js';
import { assertAccessibleLightAndDark, launchBrowser, logInWithForm, skipWithoutChromium, startServer, type RunningServer } from '../support/browser.js';

const SHOTS = process.env.SCREENSHOT_DIR;

const picture = (format: 'png' | 'jpeg', background: { r: number; g: number; b: number }): Promise<Buffer> =>
  sharp({ create: { width: 320, height: 200, channels: 3, background } }).toFormat(format).toBuffer();

describe('images in the panel, in Chromium', { skip: skipWithoutChromium }, () => {
  let server: RunningServer;
  let browser: Browser;
  let admin: Admin;
  let page: Page;
  const errors: string[] = [];

  before(async () => {
    server = await startServer();
    browser = await launchBrowser();
    if (SHOTS !== undefined) mkdirSync(SHOTS, { recursive: true });
    admin = await createAdminByCli({ app: server.app, db: server.database.db, config: server.config, close: async () => undefined });
    const context = await browser.newContext({ viewport: { width: 1280, height: 860 } });
    page = await context.newPage();
    page.on('pageerror', (error) => errors.push(error.message));
    // Chromium logs each 4xx answer as a console error; the tests check those statuses themselves.
    page.on('console', (message) => {
      if (message.type() === 'error' && !message.text().startsWith('Failed to load resource')) errors.push(message.text());
    });
    await logInWithForm(page, server.url, '/admin/login', admin.email, admin.plainPassword);
  });
  after(async () => {
    await browser?.close();
    await server?.close();
  });

  const body = () => page.locator('#field-body').inputValue();
  const status = () => page.locator('.media-upload-status');

  it('uploads with the file input and by dropping a file on the body, and the published post shows the images', async () => {
    await page.goto(`${server.url}/admin/posts/new`);
    await page.getByLabel('Title').fill('Pictures from the field');
    await page.locator('#field-body').fill('Two pictures follow.');

    await page.locator('#field-file').setInputFiles({ name: 'red-square.png', mimeType: 'image/png', buffer: await picture('png', { r: 220, g: 30, b: 40 }) });
    await assertStatus(/“red-square\.png” is uploaded and its markdown is in the body\./);
    assert.match(await body(), /^Two pictures follow\.\n!\[red square\]\(\/media\/[0-9a-f]{64}\.png\)\n$/);

    // A file dropped on the body goes in at the cursor (here, its end).
    await page.locator('#field-body').evaluate((field: HTMLTextAreaElement) => field.setSelectionRange(field.value.length, field.value.length));
    await dropFile('#field-body', 'blue sky.jpg', 'image/jpeg', await picture('jpeg', { r: 20, g: 120, b: 220 }));
    await assertStatus(/“blue sky\.jpg” is uploaded/);
    const markdown = await body();
    assert.match(markdown, /!\[blue sky\]\(\/media\/[0-9a-f]{64}\.jpg\)\n$/);

    await page.getByLabel('Status').selectOption('published');
    await page.getByRole('button', { name: 'Create post' }).click();
    await page.waitForURL(/\/admin\/posts\/\d+\/edit$/);

    const post = await server.app.services.posts.findToChange('pictures-from-the-field', 'en');
    // As the form sends it: CRLF line ends, trimmed.
    assert.equal(post?.body.replace(/\r\n/g, '\n'), markdown.trim());
    const response = await page.goto(`${server.url}/blog/pictures-from-the-field`);
    assert.match(String(response?.headers()['content-security-policy']), /img-src 'self' data:;/);
    const images = page.locator('.blog-body img');
    assert.equal(await images.count(), 2);
    for (const [index, alt] of ['red square', 'blue sky'].entries()) {
      const image = images.nth(index);
      assert.equal(await image.getAttribute('alt'), alt);
      // Loaded and decoded under the page's CSP: a refused or broken image has no natural width.
      await image.evaluate((element: HTMLImageElement) => element.decode());
      assert.equal(await image.evaluate((element: HTMLImageElement) => element.naturalWidth), 320);
    }
    assert.deepEqual(errors, []);
  });

  it('refuses a disguised file in the editor, leaving the body as it was', async () => {
    await page.goto(`${server.url}/admin/posts/new`);
    await page.locator('#field-body').fill('Nothing here yet.');
    for (const file of [
      { name: 'holiday.png', mimeType: 'image/png', buffer: Buffer.from('<!doctype html><title>x</title><script>alert(document.cookie)</script>') },
      { name: 'avatar.png', mimeType: 'image/png', buffer: Buffer.from('fetch("/admin/users").then((r) => r.text()).then(alert);') },
    ]) {
      await page.locator('#field-file').setInputFiles(file);
      await assertStatus(/This file is not a PNG, JPEG, WebP, GIF or AVIF image\./);
      assert.equal(await body(), 'Nothing here yet.');
      await status().evaluate((element) => (element.textContent = ''));
    }
    assert.equal(await server.database.db.kysely.selectFrom('media').select('id').execute().then((rows) => rows.length), 2);
  });

  it('refuses a disguised file in the library with the message beside the field', async () => {
    await page.goto(`${server.url}/admin/media`);
    await page.locator('#field-file').setInputFiles({ name: 'cat.png', mimeType: 'image/png', buffer: Buffer.from('<html><body onload="alert(1)"></body></html>') });
    await page.getByRole('button', { name: 'Upload' }).click();
    await page.waitForSelector('#field-file-error');
    assert.equal(await page.locator('#field-file-error').textContent(), 'This file is not a PNG, JPEG, WebP, GIF or AVIF image.');
    assert.equal(await page.locator('#field-file').getAttribute('aria-invalid'), 'true');
  });

  it('lists the uploads, and warns before deleting an image a post shows', async () => {
    await page.goto(`${server.url}/admin/media`);
    // A file dropped on the form is sent as if chosen.
    await dropFile('.drop-zone', 'spare.png', 'image/png', await picture('png', { r: 250, g: 200, b: 20 }));
    await page.waitForSelector('.flash');
    assert.match(String(await page.locator('.flash').textContent()), /“spare\.png” is uploaded/);
    assert.equal(await page.locator('.media-item').count(), 3);
    await assertAccessibleLightAndDark(page, 'media library');
    await shots('media-library');

    await page.getByRole('link', { name: 'Delete red-square.png' }).click();
    await page.waitForURL(/\/admin\/media\/\d+\/delete$/);
    assert.match(String(await page.locator('.confirm .alert').textContent()), /Posts show this image \(1\)/);
    assert.equal(await page.getByRole('link', { name: 'Pictures from the field' }).count(), 1);
    await assertAccessibleLightAndDark(page, 'media delete warning');
    await shots('media-delete');
    await page.getByRole('button', { name: 'Delete anyway' }).click();
    await page.waitForURL(`${server.url}/admin/media`);
    assert.match(String(await page.locator('.flash').textContent()), /“red-square\.png” is deleted\./);
    assert.equal(await page.locator('.media-item').count(), 2);
    assert.deepEqual(errors, []);
  });

  it('keeps the editor with its images card accessible', async () => {
    await page.goto(`${server.url}/admin/posts/new`);
    await assertAccessibleLightAndDark(page, 'post editor with the images card');
    await shots('media-editor');
  });

  /** Drops a file on `selector` as a browser does (dragover, then drop, carrying the file). */
  async function dropFile(selector: string, name: string, type: string, bytes: Buffer): Promise<void> {
    const transfer = await page.evaluateHandle(
      ({ base64, name, type }) => {
        const data = new DataTransfer();
        data.items.add(new File([Uint8Array.from(atob(base64), (c) => c.charCodeAt(0))], name, { type }));
        return data;
      },
      { base64: bytes.toString('base64'), name, type },
    );
    await page.locator(selector).dispatchEvent('dragover', { dataTransfer: transfer });
    await page.locator(selector).dispatchEvent('drop', { dataTransfer: transfer });
  }

  async function assertStatus(pattern: RegExp): Promise<void> {
    await page.waitForFunction((source) => new RegExp(source).test(document.querySelector('.media-upload-status')?.textContent ?? ''), pattern.source);
    assert.match(String(await status().textContent()), pattern);
  }

  /** Screenshots at 1280 and 390 px, in English and French, light and dark; the page is left English, 1280 px, light. */
  async function shots(name: string): Promise<void> {
    if (SHOTS === undefined) return;
    const url = page.url();
    for (const locale of ['en', 'fr']) {
      await page.goto(`${server.url}/locale/${locale}`);
      await page.goto(url);
      for (const width of [1280, 390]) {
        await page.setViewportSize({ width, height: width === 390 ? 844 : 860 });
        for (const colorScheme of ['light', 'dark'] as const) {
          await page.emulateMedia({ colorScheme });
          await page.evaluate(() => window.scrollTo(0, 0));
          await page.screenshot({ path: join(SHOTS, `${name}-${locale}-${width}-${colorScheme}.png`), fullPage: true });
        }
      }
    }
    await page.goto(`${server.url}/locale/en`);
    await page.setViewportSize({ width: 1280, height: 860 });
    await page.emulateMedia({ colorScheme: 'light' });
    await page.goto(url);
  }
});
