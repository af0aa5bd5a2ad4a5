// The home page belongs to the owner: its headline and introduction come from the site settings
// (by default the site's name and a translated text), the card about the API can be turned off,
// and a change made on the panel's site form shows on the next visit, kept page or not. The demo
// content of db:seed reads like a blog: no post repeats its title as a heading and as its excerpt,
// and no demo account is a label ("Bob Unverified").
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { afterEach, beforeEach, describe, it } from 'node:test';
import type { FastifyInstance } from 'fastify';
import { DEMO_USERS, seedDemo } from '../../src/cli/seed.js';
import { buildTestApp, type TestApp } from '../helpers.js';
import { decode, signedInAdmin, siteForm } from '../admin/support.js';

const home = (app: FastifyInstance, headers: Record<string, string> = {}) => app.inject({ method: 'GET', url: '/', headers: { accept: 'text/html', ...headers } });
const heroOf = (html: string) => {
  const match = /<section class="hero home-hero">\s*<h1>([^<]*)<\/h1>\s*<p class="lead">([^<]*)<\/p>/.exec(html);
  return { headline: decode(match?.[1] ?? ''), intro: decode(match?.[2] ?? '') };
};
const hasApiCard = (html: string) => html.includes('id="home-api-title"');

describe('the home page', () => {
  let t: TestApp;
  beforeEach(async () => {
    t = await buildTestApp();
  });
  afterEach(() => t.close());

  it("shows the site's name and the default introduction in the visitor's language while neither an introduction nor a description is set", async () => {
    await t.app.services.settings.put('site_name', 'Les Carnets', true);
    // A new database has a description (the migration's): emptied, it is none.
    await t.app.services.settings.put('site_description', '', true);
    assert.deepEqual(heroOf((await home(t.app)).body), { headline: 'Les Carnets', intro: 'Accounts, personal access tokens and posts, with an administration panel.' });
    assert.deepEqual(heroOf((await home(t.app, { 'accept-language': 'fr' })).body), {
      headline: 'Les Carnets',
      intro: "Comptes, jetons d'accès personnels et articles, avec un panneau d'administration.",
    });
    assert.ok(hasApiCard((await home(t.app)).body), 'the API card is on by default');
  });

  it("shows the site's description as the introduction while no introduction is set", async () => {
    await t.app.services.settings.put('site_name', 'Les Carnets', true);
    await t.app.services.settings.put('site_description', 'Notes from the workshop.', true);
    try {
      assert.deepEqual(heroOf((await home(t.app)).body), { headline: 'Les Carnets', intro: 'Notes from the workshop.' });
      assert.deepEqual(heroOf((await home(t.app, { 'accept-language': 'fr' })).body), { headline: 'Les Carnets', intro: 'Notes from the workshop.' });
    } finally {
      await t.app.services.settings.put('site_description', 'Accounts, tokens and posts.', true);
    }
  });

  it('shows the headline and introduction saved on the panel, escaped, and hides the API card once turned off, on the next visit', async () => {
    const before = await home(t.app);
    assert.ok(hasApiCard(before.body));
    const { client } = await signedInAdmin(t);
    await client.get('/admin/settings');
    const saved = await client.post(
      '/admin/settings/site',
      siteForm({ site_description: 'Travel notes, weekly.', home_headline: 'Notes <from> the road', home_intro: 'Short stories & long walks.', home_api_card: undefined }),
    );
    assert.equal(saved.statusCode, 303, saved.body);
    for (const headers of [{ 'accept-language': 'en' }, { 'accept-language': 'fr' }]) {
      const response = await home(t.app, headers);
      assert.equal(response.statusCode, 200);
      assert.deepEqual(heroOf(response.body), { headline: 'Notes <from> the road', intro: 'Short stories & long walks.' });
      assert.match(response.body, /Notes &lt;from&gt; the road/);
      assert.equal(hasApiCard(response.body), false, 'the API card is off');
      assert.match(response.body, /<meta name="description" content="Travel notes, weekly.">/);
    }
    await client.post('/admin/settings/site', siteForm({ home_api_card: '1' }));
    const again = await home(t.app);
    assert.ok(hasApiCard(again.body), 'the API card is back');
    assert.deepEqual(heroOf(again.body).headline, 'Tessera', 'an emptied headline shows the name again');
  });
});

describe('db:seed demo content', () => {
  let t: TestApp;
  beforeEach(async () => {
    t = await buildTestApp();
  });
  afterEach(() => t.close());

  it('gives each demo post an excerpt of its own and a body that does not start with its title', async () => {
    await seedDemo(t.app.services);
    const posts = await t.db.kysely.selectFrom('posts').select(['title', 'excerpt', 'body']).execute();
    assert.equal(posts.length, 44);
    for (const post of posts) {
      assert.ok(!post.excerpt.includes(post.title), `the excerpt of “${post.title}” says more than its title`);
      assert.doesNotMatch(post.body, /^#/, `“${post.title}” starts with its text, not a heading`);
      assert.ok(!post.body.includes(`## ${post.title}`), `“${post.title}” does not repeat its title as a heading`);
    }
    const html = (await home(t.app)).body;
    const first = posts.find((post) => html.includes(post.excerpt.replace(/'/g, '&#39;')));
    assert.ok(first !== undefined, 'the home page lists a post with its excerpt');
  });

  it('names its demo accounts as people, with no "Bob Unverified"', async () => {
    await seedDemo(t.app.services);
    const names = (await t.db.kysely.selectFrom('users').select('name').execute()).map((user) => user.name);
    assert.ok(!names.some((name) => /unverified|admin/i.test(name)), names.join(', '));
    assert.deepEqual(names.sort(), DEMO_USERS.map((user) => user.name).sort());
    assert.ok(DEMO_USERS.some((user) => !user.verified), 'one demo reader has still to confirm their address');
  });

  it("leaves one Ada at most after the README's first steps: db:seed or admin:create, never both", async () => {
    const readme = readFileSync(new URL('../../README.md', import.meta.url), 'utf8');
    // The first steps: the first two such commands (a reference list of commands follows later).
    const commands = [...readme.matchAll(/^npm run cli -- (db:seed|admin:create)\b.*$/gm)].map((match) => match[0]).slice(0, 2);
    assert.deepEqual(commands.map((command) => command.split(' ')[4]), ['db:seed', 'admin:create'], commands.join('\n'));
    // The two are alternatives in the text between them, not two steps.
    const between = readme.slice(readme.indexOf(commands[0]!), readme.indexOf(commands[1]!));
    assert.match(between, /\bor, for a site of your own\b/);
    // The administrator admin:create names is not one of the seed's people.
    const named = /--name "([^"]+)"/.exec(commands[1]!)?.[1] ?? '';
    assert.ok(named !== '');
    assert.ok(!DEMO_USERS.some((user) => user.name.split(' ')[0] === named), `the seed also has a ${named}`);
  });
});
