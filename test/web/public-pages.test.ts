// The blog's pages as a visitor without a session sees them, and the Atom feed, are rendered once
// and kept (reply.publicPage, plugins/views.ts; http/feeds/feed.ts), yet every answer is exact: a post published, edited or
// withdrawn through this instance or another shows on the next request, a scheduled post at its
// time, a settings change at once; a signed-in visitor gets a page of their own, and every
// language its own page.
import assert from 'node:assert/strict';
import { setTimeout as sleep } from 'node:timers/promises';
import { after, before, describe, it } from 'node:test';
import type { FastifyInstance } from 'fastify';
import { buildTestApp, createUser, twoInstances, type TestApp } from '../helpers.js';
import { WebClient } from '../support/client.js';
import { login } from './support.js';

let sequence = 0;
/** A post published `at` (an hour ago unless told), through the service. */
function publish(app: FastifyInstance, title: string, fields: { locale?: string; at?: Date } = {}) {
  sequence += 1;
  return app.services.posts.create(null, {
    title,
    slug: `kept-${sequence}`,
    excerpt: `About ${title}.`,
    body: `Body of ${title}.`,
    locale: fields.locale ?? 'en',
    status: 'published',
    published_at: (fields.at ?? new Date(Date.now() - 3_600_000)).toISOString(),
  });
}

/** Counts the reads of the public list the pages make (the service itself, not a stand-in). */
function countListReads(app: FastifyInstance): { count: number } {
  const counter = { count: 0 };
  const posts = app.services.posts;
  const list = posts.list.bind(posts);
  posts.list = (filter) => {
    counter.count += 1;
    return list(filter);
  };
  return counter;
}

const get = (app: FastifyInstance, url: string, headers: Record<string, string> = {}) => app.inject({ method: 'GET', url, headers });

describe('public pages kept for visitors without a session', () => {
  let t: TestApp;
  let reads: { count: number };

  before(async () => {
    t = await buildTestApp();
    await publish(t.app, 'First kept post');
    reads = countListReads(t.app);
  });
  after(() => t.close());

  it('renders /blog once for every visitor without a session, the same bytes each time', async () => {
    const before = reads.count;
    const first = await get(t.app, '/blog');
    const second = await get(t.app, '/blog');
    assert.equal(first.statusCode, 200);
    assert.equal(second.body, first.body);
    assert.equal(second.headers.etag, first.headers.etag);
    assert.equal(second.headers['content-type'], 'text/html; charset=utf-8');
    assert.equal(reads.count - before, 1);
  });

  it('shows a post published through the service on the next request', async () => {
    await get(t.app, '/blog');
    await publish(t.app, 'Freshly published');
    assert.match((await get(t.app, '/blog')).body, /Freshly published/);
    assert.match((await get(t.app, '/')).body, /Freshly published/);
  });

  it('shows a post edited or withdrawn on the next request, on the post page too', async () => {
    const post = await publish(t.app, 'Soon edited');
    const path = `/blog/${post.slug}`;
    assert.match((await get(t.app, path)).body, /<h1>Soon edited</);
    await t.app.services.posts.update(post, { title: 'Edited title' });
    assert.match((await get(t.app, path)).body, /<h1>Edited title</);
    await t.app.services.posts.update({ ...post, title: 'Edited title' }, { status: 'draft' });
    assert.equal((await get(t.app, path)).statusCode, 404);
    assert.doesNotMatch((await get(t.app, '/blog')).body, /Edited title/);
  });

  it('shows a scheduled post once its time has come, with no write in between', async () => {
    await publish(t.app, 'Scheduled post', { at: new Date(Date.now() + 1_500) });
    assert.doesNotMatch((await get(t.app, '/blog')).body, /Scheduled post/);
    assert.doesNotMatch((await get(t.app, '/blog')).body, /Scheduled post/);
    await sleep(1_600);
    assert.match((await get(t.app, '/blog')).body, /Scheduled post/);
  });

  it('shows a scheduled post in the feed once its time has come, with no write in between', async () => {
    await publish(t.app, 'Scheduled for the feed', { at: new Date(Date.now() + 1_500) });
    assert.doesNotMatch((await get(t.app, '/feed.xml')).body, /Scheduled for the feed/);
    assert.doesNotMatch((await get(t.app, '/feed.xml')).body, /Scheduled for the feed/);
    await sleep(1_600);
    assert.match((await get(t.app, '/feed.xml')).body, /Scheduled for the feed/);
  });

  it('shows a changed site name at once', async () => {
    await get(t.app, '/blog');
    await t.app.services.settings.put('site_name', 'Kept Carnets', true);
    try {
      assert.match((await get(t.app, '/blog')).body, /<title>Blog · Kept Carnets<\/title>/);
    } finally {
      await t.db.kysely.deleteFrom('settings').where('key', '=', 'site_name').execute(); // a database without it (the services never delete it)
    }
  });

  it('keeps a page per language: French visitors read the French page', async () => {
    const english = await get(t.app, '/blog', { 'accept-language': 'en' });
    const french = await get(t.app, '/blog', { 'accept-language': 'fr' });
    assert.match(english.body, /<html lang="en">/);
    assert.match(french.body, /<html lang="fr">/);
    assert.match((await get(t.app, '/blog', { 'accept-language': 'en' })).body, /<html lang="en">/);
  });

  it('renders a signed-in visitor their own page, and the kept page stays anonymous', async () => {
    const user = await createUser(t.app, { name: 'Reader Kept', email: 'kept-reader@example.com' });
    const client = new WebClient(t.app);
    await login(client, user.email, user.plainPassword);
    // Its first page stores the session's CSRF secret (a write); the kept page comes after it.
    await client.get('/dashboard');
    await get(t.app, '/blog');
    const before = reads.count;
    const signedIn = await client.get('/blog');
    assert.equal(signedIn.statusCode, 200);
    assert.match(signedIn.body, /action="\/logout"/);
    assert.equal(reads.count - before, 1, 'read for the signed-in visitor');
    const anonymous = await get(t.app, '/blog');
    assert.doesNotMatch(anonymous.body, /action="\/logout"/);
    assert.doesNotMatch(anonymous.body, /name="_token"/);
  });
});

describe('public pages kept on two instances of one database', () => {
  let a: FastifyInstance;
  let b: FastifyInstance;
  let close: () => Promise<void>;

  before(async () => {
    ({ a, b, close } = await twoInstances());
  });
  after(() => close());

  it('shows on one instance a post published through the other, on the next request', async () => {
    await get(a, '/blog');
    await get(a, '/');
    await get(a, '/feed.xml');
    const post = await publish(b, 'Published elsewhere');
    assert.match((await get(a, '/blog')).body, /Published elsewhere/);
    assert.match((await get(a, '/')).body, /Published elsewhere/);
    assert.match((await get(a, `/blog/${post.slug}`)).body, /<h1>Published elsewhere</);
    assert.match((await get(a, '/feed.xml')).body, /Published elsewhere/);
    await b.services.posts.update(post, { status: 'draft' });
    assert.doesNotMatch((await get(a, '/blog')).body, /Published elsewhere/);
    assert.equal((await get(a, `/blog/${post.slug}`)).statusCode, 404);
    assert.doesNotMatch((await get(a, '/feed.xml')).body, /Published elsewhere/);
  });

  it('shows on one instance a site name changed through the other, on every page at once', async () => {
    await get(a, '/blog');
    await get(a, '/login');
    await b.services.settings.put('site_name', 'Elsewhere Carnets', true);
    assert.match((await get(a, '/blog')).body, /<title>Blog · Elsewhere Carnets<\/title>/);
    assert.match((await get(a, '/login')).body, /Elsewhere Carnets<\/title>/);
  });
});
