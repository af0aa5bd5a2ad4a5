// The post_counts table that the public list reads its total from: kept by triggers through
// every kind of write, and the published total leaves out scheduled posts.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { sql } from 'kysely';
import { countPosts } from '../../src/modules/posts/posts.repository.js';
import { buildTestApp, type TestApp } from '../helpers.js';

describe('post counts kept by triggers', () => {
  let t: TestApp;
  before(async () => {
    t = await buildTestApp();
    await t.app.services.settings.put('locales', ['en', 'fr', 'de'], true);
  });
  after(() => t.close());

  const kept = async () => {
    const rows = await t.db.kysely.selectFrom('post_counts').selectAll().where('n', '!=', 0).orderBy('status').orderBy('locale').execute();
    return Object.fromEntries(rows.map((r) => [`${r.status}/${r.locale}`, Number(r.n)]));
  };
  const actual = async () => {
    const rows = await t.db.kysely
      .selectFrom('posts')
      .select(['status', 'locale', (eb) => eb.fn.countAll<number | string>().as('n')])
      .groupBy(['status', 'locale'])
      .orderBy('status')
      .orderBy('locale')
      .execute();
    return Object.fromEntries(rows.map((r) => [`${r.status}/${r.locale}`, Number(r.n)]));
  };
  const now = () => new Date().toISOString();

  it('matches a real count after inserts, status and locale changes, deletes and raw SQL', async () => {
    const posts = t.app.services.posts;
    const a = await posts.create(null, { title: 'Alpha', status: 'published', locale: 'en' });
    const b = await posts.create(null, { title: 'Beta', status: 'draft', locale: 'en' });
    await posts.create(null, { title: 'Gamma', status: 'published', locale: 'fr' });
    assert.deepEqual(await kept(), await actual());
    await posts.update(b, { status: 'published' });
    await posts.update(a, { locale: 'fr' });
    await posts.update(a, { title: 'Alpha 2' });
    assert.deepEqual(await kept(), await actual());
    await posts.remove(b);
    await sql`insert into posts (title, slug, excerpt, body, locale, status, published_at, created_at, updated_at)
              values ('Raw', 'raw', '', '', 'en', 'archived', null, ${now()}, ${now()})`.execute(t.db.kysely);
    await sql`update posts set status = 'draft' where slug = 'gamma'`.execute(t.db.kysely);
    assert.deepEqual(await kept(), await actual());
    assert.deepEqual(await kept(), { 'archived/en': 1, 'draft/fr': 1, 'published/fr': 1 });
  });

  it('leaves scheduled posts out of the published total', async () => {
    const future = new Date(Date.now() + 3_600_000).toISOString();
    await t.app.services.posts.create(null, { title: 'Later', status: 'published', locale: 'de', published_at: future });
    await t.app.services.posts.create(null, { title: 'Now', status: 'published', locale: 'de' });
    assert.equal(await countPosts(t.db.kysely, { status: 'published', locale: 'de', now: now() }), 1);
    const list = await t.app.inject({ url: '/api/posts?locale=de' });
    assert.equal(list.json().meta.total, 1);
    assert.equal(list.json().data.length, 1);
  });
});
