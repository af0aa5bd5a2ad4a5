// The favicon: one SVG served by the service (public/favicon.svg), linked from the site's and the
// panel's layouts, drawn for dark tab strips too; /favicon.ico, which browsers ask for whatever
// a page links, is a permanent redirect to it rather than a 404 on every first visit.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { buildTestApp, type TestApp } from '../helpers.js';

const ICON = '/assets/favicon.svg';
const iconLinks = (html: string) => [...html.matchAll(/<link rel="icon" href="([^"]*)"[^>]*>/g)].map((match) => match[0]);

describe('favicon', () => {
  let t: TestApp;
  before(async () => {
    t = await buildTestApp();
  });
  after(() => t.close());

  it('serves the SVG icon, with colours for dark mode inside it', async () => {
    const response = await t.app.inject({ method: 'GET', url: ICON });
    assert.equal(response.statusCode, 200);
    assert.match(String(response.headers['content-type']), /^image\/svg\+xml/);
    assert.match(response.body, /^<svg xmlns="http:\/\/www\.w3\.org\/2000\/svg"/);
    assert.match(response.body, /@media \(prefers-color-scheme: dark\)/);
  });

  it('redirects /favicon.ico permanently to the SVG instead of a 404', async () => {
    const response = await t.app.inject({ method: 'GET', url: '/favicon.ico' });
    assert.equal(response.statusCode, 301);
    assert.equal(response.headers.location, ICON);
  });

  for (const url of ['/', '/login', '/admin/login', '/does-not-exist']) {
    it(`links the icon from ${url}, and only it`, async () => {
      const response = await t.app.inject({ method: 'GET', url });
      assert.deepEqual(iconLinks(response.body), [`<link rel="icon" href="${ICON}" type="image/svg+xml">`]);
    });
  }
});
