// "Back to the page you came from" never leaves the site: the language switch, the panel's
// publish buttons and the password-confirmation detour read a Referer, which is input. A table
// of hostile Referers (the issue's //evil.example, its backslash and control-character variants,
// other schemes) must each land on a path of this site.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { sameSitePath, safeBackPath } from '../../src/http/shared/back-path.js';
import { buildTestApp, createUser, type TestApp } from '../helpers.js';
import { signedInAdmin } from '../admin/support.js';
import { WebClient } from '../support/client.js';
import { continuation, login } from './support.js';

const APP = 'http://localhost:3000';

// Each Referer a page of another site (or a crafted link) can make the browser send.
const HOSTILE = [
  `${APP}//evil.example/x`,
  `${APP}///evil.example/x`,
  `${APP}/\\evil.example/x`,
  `${APP}/\\/evil.example/x`,
  `${APP}\\\\evil.example/x`,
  `${APP}/\t/evil.example/x`,
  `${APP}/\n/evil.example/x`,
  `${APP}/%09/evil.example/x`,
  'http://evil.example/x',
  '//evil.example/x',
  '/\\evil.example/x',
  '\\\\evil.example/x',
  'javascript:alert(1)',
  'data:text/html,<script>alert(1)</script>',
  `http://localhost:3001/x`,
  `https://localhost:3000/x`,
];

/** True when a Location header, as a browser resolves it against the site, stays on the site. */
function staysOnSite(location: string | undefined): boolean {
  if (location === undefined) return false;
  // Browsers drop tabs and newlines from a URL and read "\" as "/": a Location must not
  // become another origin after either.
  const cleaned = location.replace(/[\t\n\r]/g, '');
  return new URL(cleaned, APP).origin === APP && !/^[/\\]{2}/.test(cleaned) && !/[\p{Cc}\\]/u.test(location);
}

describe('same-site paths', () => {
  it('refuses anything a browser could read as another site', () => {
    for (const path of ['//evil.example', '///evil.example', '/\\evil.example', '\\\\evil.example', '\\/evil.example', '/\t/evil.example', '/\n/evil.example', '/\u0000/x', 'evil.example', 'https://evil.example', 'javascript:alert(1)', '']) {
      assert.equal(sameSitePath(path), null, JSON.stringify(path));
    }
  });

  it('keeps the paths of the site, query included', () => {
    for (const path of ['/', '/blog?page=2', '/admin/posts?status=published', '/%2F%2Fevil.example', '/a//b']) {
      assert.equal(sameSitePath(path), path);
    }
  });

  it('gives the fallback for every hostile Referer', () => {
    for (const referer of HOSTILE) {
      const path = safeBackPath(referer, APP, '/fallback');
      assert.ok(staysOnSite(path), `${JSON.stringify(referer)} → ${path}`);
    }
    assert.equal(safeBackPath(`${APP}//evil.example/x`, APP), '/');
    assert.equal(safeBackPath(`${APP}/blog?page=2`, APP), '/blog?page=2');
  });
});

describe('back redirects through HTTP', () => {
  let t: TestApp;
  before(async () => {
    t = await buildTestApp();
  });
  after(async () => t.close());

  it('sends GET /locale/fr back to the page it came from, never to another site', async () => {
    const ok = await t.app.inject({ method: 'GET', url: '/locale/fr', headers: { referer: `${APP}/blog?page=2` } });
    assert.equal(ok.statusCode, 303);
    assert.equal(ok.headers.location, '/blog?page=2');
    for (const referer of HOSTILE) {
      const response = await t.app.inject({ method: 'GET', url: '/locale/fr', headers: { referer } });
      assert.equal(response.statusCode, 303, JSON.stringify(referer));
      assert.ok(staysOnSite(response.headers.location), `${JSON.stringify(referer)} → ${response.headers.location}`);
    }
  });

  it("keeps /%2F%2Fevil as a path: a browser never decodes it into a host", async () => {
    const response = await t.app.inject({ method: 'GET', url: '/locale/en', headers: { referer: `${APP}/%2F%2Fevil.example/x` } });
    assert.equal(response.headers.location, '/%2F%2Fevil.example/x');
    assert.ok(staysOnSite(response.headers.location));
  });

  it("sends the panel's publish button back to the table, never to another site", async () => {
    const { admin, client } = await signedInAdmin(t);
    const post = await t.app.services.posts.create(admin.id, { title: 'Back and forth', status: 'draft' });
    for (const referer of HOSTILE.slice(0, 8)) {
      await client.get('/admin/posts');
      const response = await client.post(`/admin/posts/${post.id}/publish`, {}, { headers: { referer } });
      assert.equal(response.statusCode, 303, JSON.stringify(referer));
      assert.equal(response.headers.location, '/admin/posts', JSON.stringify(referer));
    }
  });

  it('brings a form post back after the password confirmation to a page of the site only', async () => {
    const user = await createUser(t.app);
    for (const referer of HOSTILE.slice(0, 8)) {
      const client = new WebClient(t.app);
      await login(client, user.email, user.plainPassword);
      await client.get('/security');
      // A form behind the confirmation: the detour keeps the Referer as the page to return to.
      const detour = await client.post('/user/two-factor', {}, { headers: { referer } });
      assert.equal(detour.statusCode, 303, JSON.stringify(referer));
      await client.get('/user/confirm-password');
      const confirmed = await client.post('/user/confirm-password', { password: user.plainPassword });
      assert.equal(confirmed.statusCode, 303, confirmed.body);
      // The post goes on from the continuation page, whose Cancel is the page to return to.
      const back = continuation((await client.follow(confirmed)).body).cancel;
      assert.ok(staysOnSite(back ?? undefined), `${JSON.stringify(referer)} → ${back}`);
      // An encoded tab is a path of this site like any other; the rest fall back to /security.
      if (!referer.includes('%09')) assert.equal(back, '/security', JSON.stringify(referer));
    }
  });
});
