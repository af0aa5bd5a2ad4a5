// Tables on a phone (390 px wide) in headless Chromium: the API tokens table, the security page's
// sessions and the panel's users, posts, tokens and settings stack their rows (class stack-table),
// so every row action is inside the viewport without scrolling sideways, and clickable; the page
// itself never scrolls sideways (the audit log included). The settings table breaks a long key
// after an underscore, never inside a word. axe is clean in light and dark at that width.
// SCREENSHOT_DIR=… keeps screenshots (light, dark).
import assert from 'node:assert/strict';
import { mkdirSync } from 'node:fs';
import { after, before, describe, it } from 'node:test';
import type { Browser, Page } from 'playwright-core';
import { createUser } from '../helpers.js';
import { assertAccessibleLightAndDark, launchBrowser, logInWithForm, screenshotLightAndDark, skipWithoutChromium, startServer, type RunningServer } from '../support/browser.js';

const SHOTS = process.env.SCREENSHOT_DIR;
const PHONE = { width: 390, height: 844 };
const LONG_KEY = 'newsletter_signup_confirmation_message_moderation_notes';

type ActionBox = { label: string; left: number; right: number };

describe('tables at 390 px in Chromium', { skip: skipWithoutChromium }, () => {
  let server: RunningServer;
  let browser: Browser;
  let admin: Awaited<ReturnType<typeof createUser>>;
  let member: Awaited<ReturnType<typeof createUser>>;

  before(async () => {
    server = await startServer();
    browser = await launchBrowser();
    if (SHOTS !== undefined) mkdirSync(SHOTS, { recursive: true });
    const services = server.app.services;
    admin = await createUser(server.app, { name: 'Margaret Hamilton', email: 'margaret@example.com', admin: true });
    member = await createUser(server.app, { name: 'Alexandria Ocasio Longname-Hyphenated', email: 'a.very.long.address.for.a.phone@example-university.example.com' });
    await services.tokens.issue(member.id, 'deploy script on the build server', ['posts:read']);
    await services.tokens.issue(member.id, 'laptop', ['*']);
    // A passkey as the WebAuthn ceremony leaves it (its table on /security has a Remove button).
    await server.database.db.kysely
      .insertInto('passkeys')
      .values({ user_id: member.id, name: 'Work laptop fingerprint reader', credential_id: `cred-${member.id}`, public_key: 'pk', counter: 0, transports: '[]', backed_up: 0, last_used_at: null, created_at: new Date().toISOString() })
      .execute();
    await services.posts.create(admin.id, { title: 'A rather long post title that wraps on a phone screen', status: 'published' });
    await services.posts.create(admin.id, { title: 'A draft' });
    const by = { actor: { id: admin.id, name: admin.name, email: admin.email }, ip: null };
    await services.settings.createCustom(by, 'moderation_notes', { type: 'text', value: 'Be kind; links to sources welcome.', isPublic: false });
    await services.settings.createCustom(by, LONG_KEY, { type: 'text', value: 'Thanks for signing up.', isPublic: true });
  });
  after(async () => {
    await browser?.close();
    await server?.close();
  });

  const phonePage = async (): Promise<{ page: Page; errors: string[] }> => {
    const page = await (await browser.newContext({ viewport: PHONE })).newPage();
    const errors: string[] = [];
    page.on('pageerror', (error) => errors.push(error.message));
    return { page, errors };
  };


  /**
   * Opens `path` at 390 px and checks what a phone user needs: no sideways page scroll, every row
   * action of every table inside the viewport as the page opens (no scroll box scrolled), and
   * clickable (Playwright's actionability checks: visible, stable, the topmost element at its
   * centre); then axe in light and dark.
   */
  const checkPage = async (page: Page, path: string, name: string, actionsPerRow: number | ((rows: number) => number)) => {
    await page.goto(`${server.url}${path}`);
    assert.ok(await page.evaluate(() => document.documentElement.scrollWidth <= window.innerWidth), `${path}: the page does not scroll sideways`);
    const boxes = await page.evaluate(() =>
      [...document.querySelectorAll('main table td.row-actions :is(a, button)')].map((element): ActionBox => {
        const rect = element.getBoundingClientRect();
        return { label: (element.textContent ?? '').trim(), left: rect.left, right: rect.right };
      }),
    );
    const rows = await page.locator('main table tbody tr').count();
    if (actionsPerRow !== 0) assert.ok(rows > 0, `${path}: the table has rows`);
    assert.equal(boxes.length, typeof actionsPerRow === 'number' ? rows * actionsPerRow : actionsPerRow(rows), `${path}: row actions found`);
    for (const box of boxes) {
      assert.ok(box.left >= 0 && box.right <= PHONE.width, `${path}: "${box.label}" is within the viewport (${box.left}–${box.right})`);
    }
    const actions = page.locator('main table td.row-actions').locator('a, button');
    for (let i = 0; i < boxes.length; i += 1) await actions.nth(i).click({ trial: true });
    assert.ok(
      await page.evaluate(() => [...document.querySelectorAll('main .table-wrap')].every((wrap) => wrap.scrollLeft === 0 && wrap.scrollWidth <= wrap.clientWidth)),
      `${path}: no table scrolls sideways, nor had to for a click`,
    );
    await assertAccessibleLightAndDark(page, `${name} at 390 px`);
    await screenshotLightAndDark(page, SHOTS, `mobile-${name}`);
    return boxes.map((box) => box.label);
  };

  it('keeps the row actions of the API tokens and sessions tables in view and clickable', async () => {
    const { page, errors } = await phonePage();
    // A second browser signed in, so the sessions table has an "End" button.
    const other = await phonePage();
    await logInWithForm(other.page, server.url, '/login', member.email, member.plainPassword);
    await logInWithForm(page, server.url, '/login', member.email, member.plainPassword);

    await checkPage(page, '/user/api-tokens', 'api-tokens', 1);
    const revoke = page.locator('main table td.row-actions a').first();
    await revoke.click();
    await page.waitForURL(/\/user\/api-tokens\/\d+\/delete$/);

    // Passkeys: Remove; sessions: End for each but this one.
    const security = await checkPage(page, '/security', 'security', (rows) => rows - 1);
    assert.deepEqual(security, ['Remove', 'End']);
    assert.deepEqual([...errors, ...other.errors], []);
  });

  it("keeps the row actions of the panel's tables in view and clickable", async () => {
    const { page, errors } = await phonePage();
    await logInWithForm(page, server.url, '/admin/login', admin.email, admin.plainPassword);
    // users: edit each, delete all but oneself; posts: edit, (un)publish, delete; tokens: revoke;
    // settings: edit, delete.
    await checkPage(page, '/admin/users', 'admin-users', (rows) => 2 * rows - 1);
    await checkPage(page, '/admin/posts', 'admin-posts', 3);
    await checkPage(page, '/admin/tokens', 'admin-tokens', 1);
    await checkPage(page, '/admin/settings', 'admin-settings', 2);
    await checkPage(page, '/admin/audit', 'admin-audit', 0);
    // French column names are longer ("Dernière utilisation").
    await page.goto(`${server.url}/locale/fr`);
    await checkPage(page, '/admin/tokens', 'admin-tokens-fr', 1);
    await checkPage(page, '/admin/users', 'admin-users-fr', (rows) => 2 * rows - 1);
    await page.goto(`${server.url}/locale/en`);

    await page.goto(`${server.url}/admin/posts`);
    await page.locator('main table td.row-actions').getByRole('button', { name: /^Unpublish/ }).click();
    await page.getByRole('status').filter({ hasText: 'is back to draft' }).waitFor();
    assert.deepEqual(errors, []);
  });

  it('breaks a long setting key after an underscore, never inside a word', async () => {
    const { page } = await phonePage();
    await logInWithForm(page, server.url, '/admin/login', admin.email, admin.plainPassword);
    await page.goto(`${server.url}/admin/settings`);
    const keys = await page.evaluate(() =>
      [...document.querySelectorAll('main table tbody tr td:first-child code')].map((code) => {
        // Each word's own line boxes: a word split across two lines has rects on two lines.
        const words: { word: string; lines: number }[] = [];
        const walker = document.createTreeWalker(code, NodeFilter.SHOW_TEXT);
        for (let node = walker.nextNode(); node !== null; node = walker.nextNode()) {
          for (const match of (node.textContent ?? '').matchAll(/[a-z0-9]+/g)) {
            const range = document.createRange();
            range.setStart(node, match.index);
            range.setEnd(node, match.index + match[0].length);
            const tops = new Set([...range.getClientRects()].map((rect) => Math.round(rect.top)));
            words.push({ word: match[0], lines: tops.size });
          }
        }
        const whole = document.createRange();
        whole.selectNodeContents(code);
        const lines = new Set([...whole.getClientRects()].map((rect) => Math.round(rect.top))).size;
        return { key: code.textContent, right: code.getBoundingClientRect().right, lines, words };
      }),
    );
    const long = keys.find((key) => key.key === LONG_KEY);
    assert.ok(long !== undefined, 'the long key is listed');
    assert.ok(long.lines > 1, 'the long key needs more than one line at 390 px (else this test proves nothing)');
    for (const key of keys) {
      assert.ok(key.right <= PHONE.width, `${key.key} stays inside the viewport`);
      for (const word of key.words) assert.equal(word.lines, 1, `"${word.word}" of ${key.key} is not split across lines`);
    }
    assert.ok(keys.some((key) => key.key === 'moderation_notes'));
  });
});
