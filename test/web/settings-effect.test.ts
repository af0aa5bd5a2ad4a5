// The settings a reader sees take effect on the next request: site_name in every page's title
// and header (APP_NAME only where no site_name is set), default_locale as the language of a
// visitor who states none, `locales` as the languages the switch offers (those the service has
// messages for) — in one instance and across two instances on one database.
import assert from 'node:assert/strict';
import { after, afterEach, before, beforeEach, describe, it } from 'node:test';
import type { FastifyInstance } from 'fastify';
import { buildTestApp, twoInstances, type TestApp } from '../helpers.js';
import { signedInAdmin, siteForm } from '../admin/support.js';

const titleOf = (html: string) => /<title>([^<]*)<\/title>/.exec(html)?.[1] ?? null;
const brandOf = (html: string) => /<a class="brand" href="\/">([^<]*)<\/a>/.exec(html)?.[1] ?? null;
const langOf = (html: string) => /<html lang="([^"]*)"/.exec(html)?.[1] ?? null;
const switchOf = (html: string) => [...html.matchAll(/<a href="\/locale\/([^"]+)" lang=/g)].map((m) => m[1]);

const page = (app: FastifyInstance, headers: Record<string, string> = {}) => app.inject({ method: 'GET', url: '/login', headers });

describe('settings on the pages', () => {
  let t: TestApp;
  beforeEach(async () => {
    t = await buildTestApp({ APP_NAME: 'Configured Name' });
  });
  afterEach(() => t.close());

  it('names the site with APP_NAME while no site_name setting exists', async () => {
    await t.db.kysely.deleteFrom('settings').where('key', '=', 'site_name').execute(); // a database without it (the services never delete it)
    const html = (await page(t.app)).body;
    assert.match(titleOf(html) ?? '', /· Configured Name$/);
    assert.equal(brandOf(html), 'Configured Name');
  });

  it('shows a site_name changed in the panel in the title and header of the next page', async () => {
    const { client } = await signedInAdmin(t);
    await client.get('/admin/settings');
    const saved = await client.post('/admin/settings/site', siteForm({ site_name: 'Les Carnets' }));
    assert.equal(saved.statusCode, 303, saved.body);
    const html = (await page(t.app)).body;
    assert.match(titleOf(html) ?? '', /· Les Carnets$/);
    assert.equal(brandOf(html), 'Les Carnets');
    const admin = (await client.get('/admin')).body;
    assert.match(admin, /<a class="brand" href="\/admin">Les Carnets /);
  });

  it('shows a site_name changed through the service on the next request, and APP_NAME again once it is deleted', async () => {
    assert.equal(brandOf((await page(t.app)).body), 'Tessera');
    await t.app.services.settings.put('site_name', 'Second Name', true);
    assert.equal(brandOf((await page(t.app)).body), 'Second Name');
    await t.db.kysely.deleteFrom('settings').where('key', '=', 'site_name').execute(); // a database without it (the services never delete it)
    assert.equal(brandOf((await page(t.app)).body), 'Configured Name');
  });

  it('speaks default_locale to a visitor who states no language, and the stated one to the others', async () => {
    assert.equal(langOf((await page(t.app)).body), 'en');
    await t.app.services.settings.put('default_locale', 'fr', true);
    const html = (await page(t.app)).body;
    assert.equal(langOf(html), 'fr');
    assert.match(html, /Se connecter|Connexion/);
    assert.equal(langOf((await page(t.app, { 'accept-language': 'en-GB,en;q=0.8' })).body), 'en');
    assert.equal(langOf((await page(t.app, { cookie: 'locale=en' })).body), 'en');
  });

  it('ignores a default_locale the service has no messages for', async () => {
    await t.app.services.settings.put('default_locale', 'de', true);
    assert.equal(langOf((await page(t.app)).body), 'en');
  });

  it('offers in the switch the configured locales that have messages, and no other language', async () => {
    assert.deepEqual(switchOf((await page(t.app)).body), ['en', 'fr']);
    await t.app.services.settings.put('locales', ['fr'], true);
    await t.app.services.settings.put('default_locale', 'fr', true);
    const html = (await page(t.app, { 'accept-language': 'en', cookie: 'locale=en' })).body;
    assert.deepEqual(switchOf(html), ['fr']);
    assert.equal(langOf(html), 'fr');
    // German is accepted for posts but has no messages: the switch does not offer it.
    await t.app.services.settings.put('locales', ['en', 'fr', 'de'], true);
    assert.deepEqual(switchOf((await page(t.app)).body), ['en', 'fr']);
  });

  it('names the site on an error page too', async () => {
    await t.app.services.settings.put('site_name', 'Erreur Site', true);
    const response = await t.app.inject({ method: 'GET', url: '/no-such-page', headers: { accept: 'text/html' } });
    assert.equal(response.statusCode, 404);
    assert.equal(brandOf(response.body), 'Erreur Site');
  });

  it('reads the settings for a page, never for a static file (a query each on PostgreSQL)', async () => {
    const settings = t.app.services.settings;
    const read = settings.site.bind(settings);
    let reads = 0;
    settings.site = () => {
      reads += 1;
      return read();
    };
    for (const url of ['/assets/app.css', '/vendor/simplewebauthn-browser.js']) {
      assert.equal((await t.app.inject({ url })).statusCode, 200, url);
    }
    assert.equal(reads, 0);
    assert.equal((await page(t.app)).statusCode, 200);
    assert.equal(reads, 1);
    // A missing file still gets the site's 404 page, in its name.
    const missing = await t.app.inject({ url: '/assets/nothing-here.css' });
    assert.equal(missing.statusCode, 404);
    assert.equal(brandOf(missing.body), 'Tessera');
  });
});

describe('settings across two instances on one database', () => {
  let a: FastifyInstance;
  let b: FastifyInstance;
  let close: () => Promise<void>;
  before(async () => {
    ({ a, b, close } = await twoInstances());
  });
  after(() => close());

  it('a change made through one instance shows on the other at its next request', async () => {
    // B has served pages and API reads with the old settings (kept in memory, where it can).
    for (let i = 0; i < 2; i += 1) {
      assert.equal(brandOf((await page(b)).body), 'Tessera');
      assert.equal((await b.inject({ url: '/api/posts?locale=de' })).statusCode, 422);
    }
    await a.services.settings.put('site_name', 'Changed Elsewhere', true);
    await a.services.settings.put('locales', ['en', 'fr', 'de'], true);
    await a.services.settings.put('default_locale', 'fr', true);
    const html = (await page(b)).body;
    assert.equal(brandOf(html), 'Changed Elsewhere');
    assert.equal(langOf(html), 'fr');
    assert.equal((await b.inject({ url: '/api/posts?locale=de' })).statusCode, 200);
  });
});
