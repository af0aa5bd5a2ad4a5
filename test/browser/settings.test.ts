// The panel's site settings and the home page they shape, in headless Chromium: the form shows
// each field with its help text; posts per page 0 or 101 and an empty name come back with their inline
// errors (focusable, announced: aria-invalid and aria-describedby) and nothing saved; a saved
// headline, introduction and API card switched off show on the home page. axe is clean in light
// and dark, at 1280 and 390 px, in English and French, and neither page scrolls sideways on a
// phone. SCREENSHOT_DIR=… keeps screenshots.
import assert from 'node:assert/strict';
import { mkdirSync } from 'node:fs';
import { after, before, describe, it } from 'node:test';
import type { Browser, Page } from 'playwright-core';
import { createUser } from '../helpers.js';
import { assertAccessibleLightAndDark, launchBrowser, logInWithForm, screenshotLightAndDark, skipWithoutChromium, startServer, type RunningServer } from '../support/browser.js';

const SHOTS = process.env.SCREENSHOT_DIR;
const WIDE = { width: 1280, height: 900 };
const PHONE = { width: 390, height: 844 };

describe('the site settings and the home page in Chromium', { skip: skipWithoutChromium }, () => {
  let server: RunningServer;
  let browser: Browser;
  let admin: Awaited<ReturnType<typeof createUser>>;

  before(async () => {
    server = await startServer();
    browser = await launchBrowser();
    if (SHOTS !== undefined) mkdirSync(SHOTS, { recursive: true });
    admin = await createUser(server.app, { name: 'Margaret Hamilton', email: 'margaret@example.com', admin: true });
    await server.app.services.settings.put('contact_email', 'editors@example.com', false);
    await server.app.services.posts.create(admin.id, { title: 'Field notes from the launch pad', excerpt: 'What a countdown teaches about checklists.', body: 'Text.', status: 'published' });
  });
  after(async () => {
    await browser?.close();
    await server?.close();
  });

  const signedIn = async (viewport: { width: number; height: number }, locale = 'en'): Promise<{ page: Page; errors: string[] }> => {
    const context = await browser.newContext({ viewport });
    const page = await context.newPage();
    const errors: string[] = [];
    page.on('pageerror', (error) => errors.push(error.message));
    await logInWithForm(page, server.url, '/admin/login', admin.email, admin.plainPassword);
    await context.addCookies([{ name: 'locale', value: locale, url: server.url }]);
    return { page, errors };
  };
  const noSidewaysScroll = async (page: Page, name: string) =>
    assert.ok(await page.evaluate(() => document.documentElement.scrollWidth <= window.innerWidth), `${name} does not scroll sideways`);

  it('refuses posts per page 0 and an empty name inline, then saves the form, in English and French, at 1280 and 390 px', async () => {
    const { page, errors } = await signedIn(WIDE);
    await page.goto(`${server.url}/admin/settings`);
    await assertAccessibleLightAndDark(page, 'settings');
    await screenshotLightAndDark(page, SHOTS, 'settings-1280-en');
    assert.equal(await page.getByLabel('Posts per page').inputValue(), '15');
    assert.match(await page.locator('#field-posts_per_page-hint').innerText(), /from 1 to 100/);

    await page.getByLabel('Site name').fill('');
    await page.getByLabel('Posts per page').fill('0');
    await page.getByRole('button', { name: 'Save the site settings' }).click();
    await page.waitForURL(`${server.url}/admin/settings/site`);
    assert.equal(await page.locator('#field-posts_per_page-error').innerText(), 'The posts per page must be a whole number from 1 to 100.');
    assert.equal(await page.locator('#field-site_name-error').innerText(), 'The site name field is required.');
    assert.equal(await page.getByLabel('Posts per page').getAttribute('aria-invalid'), 'true');
    assert.match((await page.getByLabel('Posts per page').getAttribute('aria-describedby')) ?? '', /field-posts_per_page-error/);
    await assertAccessibleLightAndDark(page, 'settings with errors');
    await screenshotLightAndDark(page, SHOTS, 'settings-errors-1280-en');
    assert.equal((await server.app.services.settings.site()).postsPerPage, 15, 'nothing was saved');

    await page.getByLabel('Site name').fill('Launch Notes');
    await page.getByLabel('Posts per page').fill('5');
    await page.getByLabel('Headline').fill('Notes from the launch pad');
    await page.getByLabel('Introduction').fill('Checklists, countdowns and what they taught us.');
    await page.getByLabel('Show the card about the API').uncheck();
    await page.getByRole('button', { name: 'Save the site settings' }).click();
    await page.waitForURL(`${server.url}/admin/settings`);
    assert.match(await page.locator('main').innerText(), /The site settings were saved\./);
    assert.equal(await page.getByLabel('Posts per page').inputValue(), '5');

    const phone = await signedIn(PHONE, 'fr');
    await phone.page.goto(`${server.url}/admin/settings`);
    assert.equal(await phone.page.getByLabel('Articles par page').inputValue(), '5');
    await noSidewaysScroll(phone.page, 'the settings page at 390 px');
    await assertAccessibleLightAndDark(phone.page, 'réglages (390 px)');
    await screenshotLightAndDark(phone.page, SHOTS, 'settings-390-fr');
    await phone.page.getByLabel('Articles par page').fill('101');
    await phone.page.getByRole('button', { name: 'Enregistrer les réglages du site' }).click();
    await phone.page.waitForURL(`${server.url}/admin/settings/site`);
    assert.equal(await phone.page.locator('#field-posts_per_page-error').innerText(), 'Le nombre d’articles par page doit être un nombre entier de 1 à 100.');
    await screenshotLightAndDark(phone.page, SHOTS, 'settings-errors-390-fr');

    const wideFr = await signedIn(WIDE, 'fr');
    await wideFr.page.goto(`${server.url}/admin/settings`);
    await assertAccessibleLightAndDark(wideFr.page, 'réglages');
    await screenshotLightAndDark(wideFr.page, SHOTS, 'settings-1280-fr');
    const narrowEn = await signedIn(PHONE);
    await narrowEn.page.goto(`${server.url}/admin/settings`);
    await noSidewaysScroll(narrowEn.page, 'the settings page at 390 px');
    await screenshotLightAndDark(narrowEn.page, SHOTS, 'settings-390-en');
    assert.deepEqual([...errors, ...phone.errors, ...wideFr.errors, ...narrowEn.errors], []);
  });

  it('shows the saved headline and introduction on the home page, without the API card', async () => {
    for (const [viewport, locale] of [[WIDE, 'en'], [PHONE, 'en'], [WIDE, 'fr'], [PHONE, 'fr']] as const) {
      const context = await browser.newContext({ viewport });
      await context.addCookies([{ name: 'locale', value: locale, url: server.url }]);
      const page = await context.newPage();
      await page.goto(`${server.url}/`);
      assert.equal(await page.locator('h1').innerText(), 'Notes from the launch pad');
      assert.equal(await page.locator('.home-hero .lead').innerText(), 'Checklists, countdowns and what they taught us.');
      assert.equal(await page.locator('#home-api-title').count(), 0, 'the API card is off');
      if (locale === 'en') assert.match(await page.locator('.home-latest').innerText(), /Field notes from the launch pad\s+[^]*What a countdown teaches about checklists\./);
      await noSidewaysScroll(page, `the home page at ${viewport.width} px`);
      await assertAccessibleLightAndDark(page, `home ${viewport.width} ${locale}`);
      await screenshotLightAndDark(page, SHOTS, `home-${viewport.width}-${locale}`);
      await context.close();
    }
  });
});
