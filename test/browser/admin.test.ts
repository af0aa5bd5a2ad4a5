// The administration panel in headless Chromium: an administrator made by the CLI logs in,
// writes and publishes a post, and GET /api/posts serves it; a non-administrator is refused
// (at the panel's login, with a site login, and once demoted); axe-core finds no serious or
// critical violation on any panel page, in light and dark. SCREENSHOT_DIR=… keeps screenshots.
import assert from 'node:assert/strict';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { after, before, describe, it } from 'node:test';
import type { Browser, Page } from 'playwright-core';
import { run } from '../../src/cli.js';
import { launchBrowser, seriousA11yViolations, skipWithoutChromium, startServer, type RunningServer } from '../support/browser.js';

const SHOTS = process.env.SCREENSHOT_DIR;
const ADMIN = { name: 'Katherine Johnson', email: 'katherine@example.com', password: 'orbital mechanics 1962' };

describe('administration panel in Chromium', { skip: skipWithoutChromium }, () => {
  let server: RunningServer;
  let browser: Browser;

  before(async () => {
    server = await startServer();
    browser = await launchBrowser();
    if (SHOTS !== undefined) mkdirSync(SHOTS, { recursive: true });
    // The only way to make an administrator: the CLI, here run in-process on the server's database.
    const out: string[] = [];
    const code = await run(['admin:create', '--name', ADMIN.name, '--email', ADMIN.email, '--password', ADMIN.password], {
      stdin: Readable.from([]),
      stdout: { write: (text: string) => out.push(text) } as unknown as NodeJS.WritableStream,
      stderr: { write: (text: string) => out.push(text) } as unknown as NodeJS.WritableStream,
      interactive: false,
      db: server.database.db,
      config: server.config,
    });
    assert.equal(code, 0, out.join(''));
  });
  after(async () => {
    await browser?.close();
    await server?.close();
  });

  const newPage = async () => {
    const context = await browser.newContext({ viewport: { width: 1280, height: 860 } });
    const page = await context.newPage();
    const errors: string[] = [];
    page.on('pageerror', (error) => errors.push(error.message));
    // Chromium logs each 4xx page as a console error; the tests assert those statuses themselves.
    page.on('console', (message) => {
      if (message.type() === 'error' && !message.text().startsWith('Failed to load resource')) errors.push(message.text());
    });
    return { page, errors };
  };

  /** axe in light and in dark (screenshots kept when SCREENSHOT_DIR is set). */
  const audit = async (page: Page, name: string) => {
    for (const colorScheme of ['light', 'dark'] as const) {
      await page.emulateMedia({ colorScheme });
      assert.deepEqual(await seriousA11yViolations(page), [], `${name} (${colorScheme})`);
      if (SHOTS !== undefined) {
        // A full-page shot of a scrolled page draws the sticky header mid-page.
        await page.evaluate(() => window.scrollTo(0, 0));
        await page.screenshot({ path: join(SHOTS, `admin-${name}-${colorScheme}.png`), fullPage: true });
        if (colorScheme === 'light') {
          await page.setViewportSize({ width: 390, height: 844 });
          await page.screenshot({ path: join(SHOTS, `admin-${name}-narrow.png`), fullPage: true });
          await page.setViewportSize({ width: 1280, height: 860 });
        }
      }
    }
    await page.emulateMedia({ colorScheme: 'light' });
  };

  const logIn = async (page: Page, email: string, password: string) => {
    await page.goto(`${server.url}/admin/login`);
    await page.getByLabel('Email').fill(email);
    await page.getByLabel('Password').fill(password);
    await page.getByRole('button', { name: 'Log in' }).click();
  };

  const apiPosts = async (): Promise<string[]> => {
    const response = await fetch(`${server.url}/api/posts`, { headers: { accept: 'application/json' } });
    assert.equal(response.status, 200);
    return ((await response.json()) as { data: { slug: string }[] }).data.map((post) => post.slug);
  };

  it('an administrator made by the CLI logs in, writes and publishes a post, and GET /api/posts serves it', async () => {
    const { page, errors } = await newPage();
    await page.goto(`${server.url}/admin/posts`);
    await page.waitForURL(`${server.url}/admin/login`);
    await audit(page, 'login');
    await page.getByLabel('Email').fill(ADMIN.email);
    await page.getByLabel('Password').fill(ADMIN.password);
    await page.getByRole('button', { name: 'Log in' }).click();
    await page.waitForURL(`${server.url}/admin/posts`);

    await page.getByRole('link', { name: 'New post' }).click();
    await page.waitForURL(`${server.url}/admin/posts/new`);
    await page.getByLabel('Title').fill('Launch window opens');
    assert.equal(await page.getByLabel('Slug').getAttribute('placeholder'), 'launch-window-opens', 'the slug the title will give');
    await page.getByLabel('Excerpt').fill('Everything about the window.');
    await page.getByLabel('Body').fill('## Countdown\n\nT-minus **ten** minutes.');
    // The preview follows the typing (public/post-editor.js; without JavaScript, the server's
    // Preview button: test/admin/posts.test.ts).
    await page.waitForFunction(() => document.querySelector('#preview .prose strong')?.textContent === 'ten');
    await audit(page, 'post-preview');
    assert.deepEqual(await apiPosts(), [], 'a preview saves nothing');

    await page.getByRole('button', { name: 'Create post' }).click();
    await page.waitForURL(/\/admin\/posts\/\d+\/edit$/);
    // The editor has a second status region, the image upload's: the flash is the page's message.
    assert.match(await page.locator('.flash').innerText(), /The post “Launch window opens” was created\./);
    assert.deepEqual(await apiPosts(), [], 'a draft is not public');
    await audit(page, 'post-edit');

    await page.getByRole('button', { name: 'Publish', exact: true }).click();
    await page.waitForURL(/\/admin\/posts\/\d+\/edit$/);
    assert.match(await page.locator('.flash').innerText(), /is published/);
    assert.deepEqual(await apiPosts(), ['launch-window-opens']);
    const single = await fetch(`${server.url}/api/posts/launch-window-opens`, { headers: { accept: 'application/json' } });
    assert.equal(((await single.json()) as { data: { body_html: string } }).data.body_html, '<h2>Countdown</h2>\n<p>T-minus <strong>ten</strong> minutes.</p>\n');

    await page.getByRole('link', { name: 'Dashboard' }).click();
    await page.waitForURL(`${server.url}/admin`);
    assert.equal(await page.locator('#stat-published').innerText(), '1');
    assert.match(await page.locator('.audit-list').innerText(), /published the post “Launch window opens”/);
    assert.deepEqual(errors, []);
  });

  it('refuses a non-administrator: at the panel login, with a site login, and once demoted', async () => {
    await server.app.services.users.create({ name: 'Ed Visitor', email: 'ed@example.com', password: 'not an admin at all', verified: true });
    const { page, errors } = await newPage();
    await logIn(page, 'ed@example.com', 'not an admin at all');
    await page.waitForURL(`${server.url}/admin/login`);
    assert.equal(await page.locator('#field-email-error').innerText(), 'These credentials do not match our records.');
    await audit(page, 'login-refused');

    // Signed in on the site, still a visitor to the panel.
    await page.goto(`${server.url}/login`);
    await page.getByLabel('Email').fill('ed@example.com');
    await page.getByLabel('Password').fill('not an admin at all');
    await page.getByRole('button', { name: 'Log in' }).click();
    await page.waitForURL(`${server.url}/dashboard`);
    await page.goto(`${server.url}/admin`);
    await page.waitForURL(`${server.url}/admin/login`);

    // An administrator demoted while signed in gets 403 on the next request.
    await server.app.services.users.create({ name: 'Short Term', email: 'short@example.com', password: 'admin for a moment', verified: true, admin: true });
    const demoted = await newPage();
    await logIn(demoted.page, 'short@example.com', 'admin for a moment');
    await demoted.page.waitForURL(`${server.url}/admin`);
    await server.app.services.users.setAdmin('short@example.com', false);
    const response = await demoted.page.goto(`${server.url}/admin/users`);
    assert.equal(response?.status(), 403);
    await audit(demoted.page, 'forbidden');
    assert.deepEqual(errors, []);
  });

  it('has no serious accessibility violation on any panel page, light or dark', async () => {
    const { page, errors } = await newPage();
    const services = server.app.services;
    const author = await services.users.findByEmail(ADMIN.email);
    const user = await services.users.create({ name: 'Mary Jackson', email: 'mary@example.com', password: 'wind tunnel engineer', verified: false });
    const token = await services.tokens.issue(user.id, 'Mary laptop', ['posts:read']);
    await services.tokens.issue(user.id, 'Mary phone');
    const post = await services.posts.create(author?.id ?? null, { title: 'A draft for later', body: 'Draft *body*', locale: 'fr' });
    await services.settings.put('contact_email', 'editors@example.com', false);

    await logIn(page, ADMIN.email, ADMIN.password);
    await page.waitForURL(`${server.url}/admin`);
    const pages: [string, string][] = [
      ['dashboard', '/admin'],
      ['users', '/admin/users'],
      ['users-search', '/admin/users?q=zzz-nothing'],
      ['user-new', '/admin/users/new'],
      ['user-edit', `/admin/users/${user.id}/edit`],
      ['user-edit-self', `/admin/users/${author?.id}/edit`],
      ['user-delete', `/admin/users/${user.id}/delete`],
      ['posts', '/admin/posts?sort=title&dir=asc'],
      ['post-new', '/admin/posts/new'],
      ['post-edit-draft', `/admin/posts/${post.id}/edit`],
      ['post-delete', `/admin/posts/${post.id}/delete`],
      ['settings', '/admin/settings'],
      ['setting-new', '/admin/settings/new'],
      ['setting-edit', '/admin/settings/contact_email/edit'],
      ['setting-delete', '/admin/settings/contact_email/delete'],
      ['tokens', '/admin/tokens'],
      ['tokens-of-user', `/admin/tokens?user=${user.id}`],
      ['token-revoke', `/admin/tokens/${token.id}/revoke`],
      ['tokens-revoke-all', `/admin/tokens/users/${user.id}/revoke`],
      ['audit', '/admin/audit'],
    ];
    for (const [name, path] of pages) {
      const response = await page.goto(`${server.url}${path}`);
      assert.equal(response?.status(), 200, path);
      await audit(page, name);
    }

    // Forms showing their inline errors.
    await page.goto(`${server.url}/admin/users/new`);
    await page.getByRole('button', { name: 'Create user' }).click();
    await page.waitForURL(`${server.url}/admin/users`);
    assert.equal(await page.locator('#field-name-error').innerText(), 'The name field is required.');
    assert.equal(await page.getByLabel('Name').getAttribute('aria-invalid'), 'true');
    await audit(page, 'user-new-errors');

    await page.goto(`${server.url}/admin/settings/new`);
    await page.getByLabel('Key').fill('Not A Key');
    await page.getByLabel('Type of value').selectOption('json');
    await page.getByLabel('Value', { exact: true }).fill('{oops');
    await page.getByRole('button', { name: 'Add setting' }).click();
    await page.waitForURL(`${server.url}/admin/settings`);
    assert.equal(await page.locator('#field-key-error').innerText(), 'The key field format is invalid.');
    assert.equal(await page.locator('#field-value-error').innerText(), 'The value is not valid JSON.');
    await audit(page, 'setting-new-errors');

    // A successful action shows its status message; French pages pass too.
    await page.goto(`${server.url}/admin/posts`);
    await page.getByRole('button', { name: 'Publish A draft for later' }).click();
    await page.waitForURL(`${server.url}/admin/posts`);
    assert.match(await page.getByRole('status').innerText(), /is published/);
    await audit(page, 'posts-flash');
    await page.goto(`${server.url}/locale/fr`);
    await page.goto(`${server.url}/admin`);
    assert.equal(await page.locator('h1').innerText(), 'Tableau de bord');
    await audit(page, 'dashboard-fr');
    assert.deepEqual(errors, []);
  });
});
