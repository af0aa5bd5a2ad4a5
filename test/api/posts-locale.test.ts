// GET /api/posts?locale=: one of the languages the `locales` setting offers, in any case (FR is
// fr), a language not offered refused with 422 naming the field.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { buildTestApp, type TestApp } from '../helpers.js';

describe('GET /api/posts?locale=', () => {
  let t: TestApp;
  before(async () => {
    t = await buildTestApp();
    await t.app.services.posts.create(null, { title: 'Bonjour', status: 'published', locale: 'fr' });
    // Written while the site offered German (a post's language is one the site offers).
    await t.app.services.settings.put('locales', ['en', 'fr', 'de'], true);
    await t.app.services.posts.create(null, { title: 'Hallo', status: 'published', locale: 'de' });
    await t.app.services.settings.put('locales', ['en', 'fr'], true);
  });
  after(() => t.close());

  const list = (query: string) => t.app.inject({ method: 'GET', url: `/api/posts?${query}`, headers: { accept: 'application/json' } });
  const titles = (body: string) => (JSON.parse(body) as { data: { title: string }[] }).data.map((item) => item.title);

  it('reads locale=FR as fr', async () => {
    const upper = await list('locale=FR');
    assert.equal(upper.statusCode, 200, upper.body);
    assert.deepEqual(titles(upper.body), ['Bonjour']);
    assert.deepEqual(titles(upper.body), titles((await list('locale=fr')).body));
  });

  it('refuses with 422 a language the locales setting does not offer', async () => {
    const response = await list('locale=de');
    assert.equal(response.statusCode, 422);
    assert.deepEqual(response.json(), { message: 'The selected locale is invalid.', errors: { locale: ['The selected locale is invalid.'] } });
    assert.equal((await list('locale=DE')).statusCode, 422);
  });

  it('accepts a language once it is added to the locales setting, at the next request', async () => {
    await t.app.services.settings.put('locales', ['en', 'fr', 'de'], true);
    const response = await list('locale=de');
    assert.equal(response.statusCode, 200, response.body);
    assert.deepEqual(titles(response.body), ['Hallo']);
    await t.app.services.settings.put('locales', ['en', 'fr'], true);
    assert.equal((await list('locale=de')).statusCode, 422);
  });

  it('answers the default language without a locale, whatever is offered', async () => {
    await t.app.services.settings.put('locales', ['fr'], true);
    assert.equal((await list('')).statusCode, 200);
    await t.app.services.settings.put('locales', ['en', 'fr'], true);
  });
});
