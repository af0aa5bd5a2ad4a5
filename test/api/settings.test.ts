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
