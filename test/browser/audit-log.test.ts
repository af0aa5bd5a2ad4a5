// The panel's audit log in headless Chromium: an administrator filters it with the form (actor,
// action, a range of days), the address bar holds the filters (the page reloads to the same
// lines), an indicator removes its filter, an unusable value shows its message beside the field,
// an empty result says so. axe is clean in light and dark, at 1280 and 390 px, in English and
// French, and the page never scrolls sideways on a phone. SCREENSHOT_DIR=… keeps screenshots.
import assert from 'node:assert/strict';
import { mkdirSync } from 'node:fs';
import { after, before, describe, it } from 'node:test';
import type { Browser, Page } from 'playwright-core';
import { createUser } from '../helpers.js';
import { insertAuditLog } from '../../src/modules/audit/audit.repository.js';
import { assertAccessibleLightAndDark, launchBrowser, logInWithForm, screenshotLightAndDark, skipWithoutChromium, startServer, type RunningServer } from '../support/browser.js';

const SHOTS = process.env.SCREENSHOT_DIR;
const WIDE = { width: 1280, height: 900 };
const PHONE = { width: 390, height: 844 };

describe('the audit log in Chromium', { skip: skipWithoutChromium }, () => {
  let server: RunningServer;
  let browser: Browser;
  let admin: Awaited<ReturnType<typeof createUser>>;

  before(async () => {
    server = await startServer();
    browser = await launchBrowser();
    if (SHOTS !== undefined) mkdirSync(SHOTS, { recursive: true });
    admin = await createUser(server.app, { name: 'Margaret Hamilton', email: 'margaret@example.com', admin: true });
    const lines: [string, string, string, string, string, object][] = [
      ['Margaret Hamilton', 'margaret@example.com', 'post.created', 'Apollo guidance notes', '2026-11-24T09:15:00.000Z', {}],
      ['Margaret Hamilton', 'margaret@example.com', 'post.updated', 'Apollo guidance notes', '2026-11-24T10:40:00.000Z', { fields: ['title', 'body'], via: 'api', token: 12 }],
      ['Margaret Hamilton', 'margaret@example.com', 'post.published', 'Apollo guidance notes', '2026-11-25T08:00:00.000Z', {}],
      ['Alexandria Ocasio Longname-Hyphenated', 'a.very.long.address.for.a.phone@example-university.example.com', 'auth.login', 'a.very.long.address.for.a.phone@example-university.example.com', '2026-11-25T11:05:00.000Z', { method: 'password' }],
      ['command line', 'root', 'admin.created', 'margaret@example.com', '2026-11-23T07:00:00.000Z', {}],
      ['Margaret Hamilton', 'margaret@example.com', 'setting.updated', 'newsletter_signup_confirmation_message', '2026-11-26T16:20:00.000Z', { fields: ['value'] }],
    ];
    for (const [name, email, action, label, at, details] of lines) {
      await insertAuditLog(server.database.db.kysely, { user_id: null, actor_name: name, actor_email: email, action, subject_type: action.split('.')[0]!, subject_id: null, subject_label: label, details: JSON.stringify(details), ip: '203.0.113.9', created_at: at });
    }
  });
  after(async () => {
    await browser?.close();
    await server?.close();
  });

  const signedIn = async (viewport: { width: number; height: number }): Promise<{ page: Page; errors: string[] }> => {
    const page = await (await browser.newContext({ viewport })).newPage();
    const errors: string[] = [];
    page.on('pageerror', (error) => errors.push(error.message));
    await logInWithForm(page, server.url, '/admin/login', admin.email, admin.plainPassword);
    return { page, errors };
  };
  const lineTexts = (page: Page) => page.locator('.audit-list li').allInnerTexts();

  it('filters with the form, keeps the filters in the address, removes one by its indicator', async () => {
    const { page, errors } = await signedIn(WIDE);
    await page.goto(`${server.url}/admin/audit`);
    await assertAccessibleLightAndDark(page, 'audit log');
    await screenshotLightAndDark(page, SHOTS, 'audit-1280-en');

    await page.getByLabel('Actor').fill('margaret');
    await page.getByLabel('Action', { exact: true }).selectOption({ label: 'Post updated' });
    await page.getByLabel('From', { exact: true }).fill('2026-11-24');
    await page.getByLabel('Until', { exact: true }).fill('2026-11-24');
    await page.getByRole('button', { name: 'Filter', exact: true }).click();
    await page.waitForURL((url) => url.searchParams.get('action') === 'post.updated');
    const url = new URL(page.url());
    assert.deepEqual(Object.fromEntries(url.searchParams), { q: '', actor: 'margaret', action: 'post.updated', from: '2026-11-24', until: '2026-11-24' });
    const filtered = await lineTexts(page);
    assert.equal(filtered.length, 1);
    assert.match(filtered[0]!, /updated the post “Apollo guidance notes” — changed: title, body — through the API, token #12/);
    const indicators = await page.locator('.filter-indicators li').allInnerTexts();
    assert.deepEqual(indicators.map((text) => text.replace(/\s*×$/, '')), ['Actor: margaret', 'Action: Post updated', 'From Nov 24, 2026', 'Until Nov 24, 2026']);
    await assertAccessibleLightAndDark(page, 'audit log, filtered');
    await screenshotLightAndDark(page, SHOTS, 'audit-1280-en-filtered');

    // A bookmark of the address opens the same lines.
    await page.goto(page.url());
    assert.deepEqual(await lineTexts(page), filtered);

    // The action's indicator removes that filter only.
    await page.getByRole('link', { name: 'Remove the filter “Action: Post updated”' }).click();
    await page.waitForURL((next) => !next.searchParams.has('action'));
    assert.equal(new URL(page.url()).searchParams.get('actor'), 'margaret');
    assert.equal((await lineTexts(page)).length, 2, 'both lines of that day by the actor');
    assert.equal(await page.getByLabel('Action', { exact: true }).inputValue(), '');
    assert.deepEqual(errors, []);
  });

  it('shows an unusable value beside its field and an empty result as such', async () => {
    const { page, errors } = await signedIn(WIDE);
    await page.goto(`${server.url}/admin/audit?action=post.exploded&from=2026-11-26&until=2026-11-20`);
    assert.equal(await page.locator('#field-action-error').innerText(), '“post.exploded” is not an action of the log, so every action is shown.');
    assert.equal(await page.locator('#field-until-error').innerText(), 'This day comes before the “From” day; it is left out.');
    assert.equal(await page.getByLabel('Action', { exact: true }).getAttribute('aria-invalid'), 'true');
    // The start is kept: the lines from that day on (this test's own sign-ins are today's).
    const kept = (await lineTexts(page)).join('\n');
    assert.match(kept, /changed the setting newsletter_signup_confirmation_message/);
    assert.doesNotMatch(kept, /Apollo/);
    await assertAccessibleLightAndDark(page, 'audit log, unusable values');
    await screenshotLightAndDark(page, SHOTS, 'audit-1280-en-errors');

    await page.goto(`${server.url}/admin/audit?actor=nobody`);
    assert.equal(await page.locator('#audit-empty').innerText(), 'No line of the log matches these filters. Clear the filters');
    await assertAccessibleLightAndDark(page, 'audit log, nothing found');
    assert.deepEqual(errors, []);
  });

  it('reads well in French and at 390 px: no sideways scroll, axe clean', async () => {
    for (const viewport of [WIDE, PHONE]) {
      const { page, errors } = await signedIn(viewport);
      for (const locale of ['en', 'fr'] as const) {
        await page.goto(`${server.url}/locale/${locale}`);
        await page.goto(`${server.url}/admin/audit?actor=margaret&from=2026-11-24&until=2026-11-25&action=post.updated`);
        if (locale === 'fr') {
          assert.match(await page.locator('.filter-indicators').innerText(), /Du 24 nov\. 2026/);
          assert.match((await lineTexts(page)).join('\n'), /a modifié l’article « Apollo guidance notes »/);
        }
        assert.ok(await page.evaluate(() => document.documentElement.scrollWidth <= window.innerWidth), `${locale} ${viewport.width}: no sideways scroll`);
        await assertAccessibleLightAndDark(page, `audit log ${locale} ${viewport.width}`);
        await screenshotLightAndDark(page, SHOTS, `audit-${viewport.width}-${locale}-filtered`);
        await page.goto(`${server.url}/admin/audit`);
        assert.ok(await page.evaluate(() => document.documentElement.scrollWidth <= window.innerWidth), `${locale} ${viewport.width}: no sideways scroll, whole log`);
        await assertAccessibleLightAndDark(page, `audit log ${locale} ${viewport.width}, whole`);
        await screenshotLightAndDark(page, SHOTS, `audit-${viewport.width}-${locale}`);
      }
      assert.deepEqual(errors, []);
    }
  });
});
