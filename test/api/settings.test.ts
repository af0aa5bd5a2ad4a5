// GET /api/settings: the public settings only.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { buildTestApp, type TestApp } from '../helpers.js';

describe('GET /api/settings', () => {
  let t: TestApp;
  before(async () => {
    t = await buildTestApp();
  });
  after(() => t.close());

  const get = async () => {
    const response = await t.app.inject({ url: '/api/settings', headers: { accept: 'application/json' } });
    return { response, data: (response.json() as { data: Record<string, unknown> }).data };
  };

  it('answers {data} with site_name, site_description, default_locale and locales on a fresh database', async () => {
    const { response, data } = await get();
    assert.equal(response.statusCode, 200);
    assert.deepEqual(Object.keys(response.json()), ['data']);
    assert.equal(typeof data.site_name, 'string');
    assert.equal(typeof data.site_description, 'string');
    assert.equal(data.default_locale, 'en');
    assert.ok(Array.isArray(data.locales));
    assert.ok((data.locales as string[]).includes('en'));
  });

  it("returns the site's own settings with their types, the defaults applied", async () => {
    const { data } = await get();
    assert.deepEqual(
      Object.fromEntries(Object.entries(data).filter(([key]) => !['site_name', 'site_description'].includes(key))),
      { home_headline: null, home_intro: null, home_api_card: true, default_locale: 'en', locales: ['en', 'fr'], posts_per_page: 15 },
    );
  });

  it('returns posts_per_page as a number even where it was stored as the text "10", and home_api_card as a boolean', async () => {
    await t.app.services.settings.put('posts_per_page', '10', true);
    await t.app.services.settings.put('home_api_card', false, true);
    const { response, data } = await get();
    assert.equal(data.posts_per_page, 10);
    assert.equal(data.home_api_card, false);
    assert.match(response.body, /"posts_per_page":10[,}]/);
    // A value the site cannot use is shown as what applies instead.
    await t.app.services.settings.put('posts_per_page', 'abc', true);
    assert.equal((await get()).data.posts_per_page, 15);
  });

  it('shows the site settings even when a row says private: they are on every page anyway', async () => {
    await t.app.services.settings.put('site_description', 'Still shown', false);
    assert.equal((await get()).data.site_description, 'Still shown');
  });

  it('is described by the OpenAPI document with those types', async () => {
    const document = (await t.app.inject({ url: '/api/openapi.json' })).json() as {
      paths: Record<string, { get: { responses: Record<string, { content: Record<string, { schema: { properties: { data: { properties: Record<string, { type: unknown }>; required: string[] } } } }> }> } }>;
    };
    const data = document.paths['/api/settings']?.get.responses['200']?.content['application/json']?.schema.properties.data;
    assert.deepEqual(
      Object.fromEntries(Object.entries(data?.properties ?? {}).map(([key, schema]) => [key, schema.type])),
      {
        site_name: 'string',
        site_description: ['string', 'null'],
        home_headline: ['string', 'null'],
        home_intro: ['string', 'null'],
        home_api_card: 'boolean',
        default_locale: 'string',
        locales: 'array',
        posts_per_page: 'integer',
      },
    );
    assert.equal(data?.required.length, 8);
  });

  it('reflects a changed public setting, with its JSON type', async () => {
    await t.app.services.settings.put('site_name', 'My Blog', true);
    await t.app.services.settings.put('posts_per_page', 12, true);
    await t.app.services.settings.put('features', { comments: false }, true);
    const { data } = await get();
    assert.equal(data.site_name, 'My Blog');
    assert.equal(data.posts_per_page, 12);
    assert.deepEqual(data.features, { comments: false });
  });

  it('never shows a private setting, its key or its value', async () => {
    await t.app.services.settings.put('mail_password', 'hunter2-smtp-secret', false);
    await t.app.services.settings.put('mail_username', 'smtp-user-private', false);
    const { response, data } = await get();
    assert.ok(!('mail_password' in data));
    assert.ok(!('mail_username' in data));
    assert.doesNotMatch(response.body, /hunter2-smtp-secret|smtp-user-private|mail_password/);
  });

  it('hides a public setting once it is made private', async () => {
    await t.app.services.settings.put('analytics_id', 'UA-1', true);
    assert.equal((await get()).data.analytics_id, 'UA-1');
    await t.app.services.settings.put('analytics_id', 'UA-1', false);
    assert.ok(!('analytics_id' in (await get()).data));
  });
});
