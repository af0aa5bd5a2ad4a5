// The ways around the site and the panel (issue 27, §7), over HTTP: the panel link an
// administrator sees on the site, the way back from /docs, the panel's "Forgot your password?",
// one format per language for a moment on both faces, the header's menu button, and a 404 that
// says "Not found" once. What Chromium shows of the menu is test/browser/ways-around.test.ts.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { buildTestApp, createUser, type TestApp } from '../helpers.js';
import { WebClient, decodeEntities } from '../support/client.js';
import { signedInAdmin, type Admin } from '../admin/support.js';
import { login } from './support.js';

const FRENCH = { 'accept-language': 'fr' };

/** The header of a page (site or panel). */
const headerOf = (html: string): string => /<header class="site-header">([\s\S]*?)<\/header>/.exec(html)?.[1] ?? '';

/** Every `<time datetime="…">text</time>` of a page: its text by its datetime. */
function timesOf(html: string): Map<string, string> {
  return new Map([...html.matchAll(/<time datetime="([^"]+)">([^<]+)<\/time>/g)].map((match) => [match[1]!, decodeEntities(match[2]!)]));
}

describe('ways around the site and the panel', () => {
  let t: TestApp;
  let admin: Admin;
  let panel: WebClient;
  let site: WebClient;

  before(async () => {
    t = await buildTestApp();
    ({ admin, client: panel } = await signedInAdmin(t));
    site = new WebClient(t.app);
    await login(site, admin.email, admin.plainPassword);
  });
  after(() => t.close());

  describe('the panel link on the site', () => {
    it('shows an administrator signed in on the site a link to the panel, in English and French', async () => {
      assert.match(headerOf((await site.get('/dashboard')).body), /<li><a href="\/admin">Admin panel<\/a><\/li>/);
      assert.match(headerOf((await site.get('/blog', FRENCH)).body), /<li><a href="\/admin">Administration<\/a><\/li>/);
    });

    it('shows no such link to a user who is not an administrator, nor to a visitor', async () => {
      const user = await createUser(t.app, { email: 'reader@example.com', password: 'reader-password-1' });
      const reader = new WebClient(t.app);
      await login(reader, user.email, 'reader-password-1');
      assert.doesNotMatch(headerOf((await reader.get('/dashboard')).body), /href="\/admin"/);
      assert.doesNotMatch(headerOf((await new WebClient(t.app).get('/blog')).body), /href="\/admin"/);
    });
  });

  it('links /docs back to the site, in the visitor’s language, before the reference', async () => {
    const english = await t.app.inject({ url: '/docs' });
    assert.equal(english.statusCode, 200);
    assert.match(english.body, /<body>\s*<nav class="docs-site-nav" lang="en" aria-label="Site"><a href="\/">Back to the site<\/a><\/nav>\s*<div id="swagger-ui">/);
    const french = await t.app.inject({ url: '/docs', headers: FRENCH });
    assert.match(french.body, /<nav class="docs-site-nav" lang="fr" aria-label="Site"><a href="\/">Retour au site<\/a><\/nav>/);
    // Swagger UI's own files are left as they are.
    const script = await t.app.inject({ url: '/docs/static/swagger-initializer.js' });
    assert.doesNotMatch(script.body, /docs-site-nav/);
  });

  it('offers "Forgot your password?" on the panel’s login, leading to a reset page that opens', async () => {
    const visitor = new WebClient(t.app);
    const page = await visitor.get('/admin/login');
    assert.match(page.body, /<a href="\/forgot-password">Forgot your password\?<\/a>/);
    assert.match((await visitor.get('/admin/login', FRENCH)).body, /<a href="\/forgot-password">Mot de passe oublié \?<\/a>/);
    assert.equal((await visitor.get('/forgot-password')).statusCode, 200);
  });

  for (const [language, headers, shown] of [
    ['English', {}, /^[A-Z][a-z]{2}\s\d{1,2},\s\d{4}, \d{1,2}:\d{2}\s[AP]M\sUTC$/],
    ['French', FRENCH, /^\d{1,2}\s[a-zéû]+\.?\s\d{4}, \d{2}:\d{2}\sUTC$/],
  ] as const) {
    it(`writes a moment the same on the site and in the panel, in ${language}`, async () => {
      await t.app.services.tokens.issue(admin.id, `laptop ${language}`, ['*']);
      const onSite = timesOf((await site.get('/user/api-tokens', headers)).body);
      const inPanel = timesOf((await panel.get('/admin/tokens', headers)).body);
      const shared = [...onSite.keys()].filter((iso) => inPanel.has(iso));
      assert.ok(shared.length > 0, 'the token’s creation time is on both pages');
      for (const iso of shared) {
        assert.equal(inPanel.get(iso), onSite.get(iso), iso);
        assert.match(onSite.get(iso)!, shown);
      }
    });
  }

  it('gives the site’s and the panel’s header a menu button for narrow screens, whose script is a file', async () => {
    const siteHeader = headerOf((await site.get('/dashboard')).body);
    assert.match(siteHeader, /<button type="button" class="menu-toggle" aria-expanded="false" aria-controls="site-menu">/);
    assert.match(siteHeader, /<div class="header-menu" id="site-menu">\s*<nav aria-label="Main">/);
    const panelPage = (await panel.get('/admin')).body;
    assert.match(headerOf(panelPage), /<button type="button" class="menu-toggle" aria-expanded="false" aria-controls="admin-menu admin-nav">/);
    assert.match(panelPage, /<div class="header-menu" id="admin-menu">/);
    assert.match(panelPage, /<nav class="admin-nav" id="admin-nav"/);
    for (const html of [siteHeader, panelPage]) assert.match(html, /<span class="menu-icon" aria-hidden="true"><\/span>Menu<\/button>/);
    const script = await t.app.inject({ url: '/assets/menu.js' });
    assert.equal(script.statusCode, 200);
    assert.match(String(script.headers['content-type']), /javascript/);
    // The panel's login has nothing to fold: no button that would open nothing.
    assert.doesNotMatch((await new WebClient(t.app).get('/admin/login')).body, /menu-toggle/);
  });

  for (const [language, headers, title, help] of [
    ['English', {}, 'Not found', 'There is no page at this address.'],
    ['French', FRENCH, 'Page introuvable', 'Aucune page à cette adresse.'],
  ] as const) {
    it(`says "${title}" once on a 404 page, with what to do, in ${language}`, async () => {
      const response = await new WebClient(t.app).get('/no-such-page', headers);
      assert.equal(response.statusCode, 404);
      const main = /<main[^>]*>([\s\S]*?)<\/main>/.exec(response.body)?.[1] ?? '';
      const text = decodeEntities(main.replace(/<[^>]+>/g, ' '));
      assert.equal(text.toLowerCase().split(title.toLowerCase()).length - 1, 1, text);
      assert.ok(text.includes(help), text);
      assert.doesNotMatch(text, /Not Found\./);
    });
  }
});
