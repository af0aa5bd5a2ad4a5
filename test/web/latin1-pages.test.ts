// Pages are written in Latin-1 (http/shared/latin1.ts): a character beyond it, in a translation,
// a name, a title or a post's body, goes out as a numeric character reference, which browsers
// show as the character itself. One such character left as it is makes the whole page a two-byte
// string, several times slower to write to the socket.
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { escapeHtml, latin1Html } from '../../src/http/shared/latin1.js';
import { buildTestApp, createUser, type TestApp } from '../helpers.js';
import { WebClient } from '../support/client.js';
import { signedInAdmin } from '../admin/support.js';
import { login } from './support.js';

const BEYOND_LATIN1 = /[\u0100-\u{10ffff}]/u;
const NAME = 'Zoë “Ω” 😀';

describe('escapeHtml and latin1Html', () => {
  it('escapes as Eta does and writes what is beyond Latin-1 as references, a surrogate pair as one', () => {
    assert.equal(escapeHtml(`<a href="x">Tom & Jerry's</a>`), '&lt;a href=&quot;x&quot;&gt;Tom &amp; Jerry&#39;s&lt;/a&gt;');
    assert.equal(escapeHtml(NAME), 'Zoë &#x201c;&#x3a9;&#x201d; &#x1f600;');
    assert.equal(escapeHtml(42), '42');
    assert.equal(escapeHtml('plain café'), 'plain café');
    assert.equal(latin1Html('<p>It’s <em>😀</em> & more</p>'), '<p>It&#x2019;s <em>&#x1f600;</em> & more</p>');
    assert.equal(latin1Html('<p>nothing to do</p>'), '<p>nothing to do</p>');
  });
});

describe('the views', () => {
  it('write no character beyond Latin-1 as their own text (an entity instead), nor an inline script or style', () => {
    const root = fileURLToPath(new URL('../../src/views/', import.meta.url));
    const views = readdirSync(root, { recursive: true, encoding: 'utf8' }).filter((name) => name.endsWith('.eta') && !name.startsWith('mail/'));
    assert.ok(views.length > 50, `found ${views.length} views`);
    for (const name of views) {
      // The text outside Eta's tags is what the page writes as it is; what is inside goes through the escape function (or is code).
      const text = readFileSync(join(root, name), 'utf8').replace(/<%[\s\S]*?%>/g, '');
      assert.doesNotMatch(text, BEYOND_LATIN1, name);
      assert.doesNotMatch(text, /<script(?![^>]*\ssrc=)[^>]*>|<style[\s>]/, `${name}: a reference inside an inline script or style would show as written`);
    }
  });
});

describe('pages beyond Latin-1', () => {
  let t: TestApp;
  let client: WebClient;
  before(async () => {
    t = await buildTestApp();
    const user = await createUser(t.app, { name: NAME, email: 'latin1-pages@example.com' });
    client = new WebClient(t.app);
    await login(client, user.email, user.plainPassword);
    await t.app.services.posts.create(user.id, { title: 'It’s “quoted” 😀', slug: 'wide-post', body: 'Body with ’ and 日本語 and 😀.', status: 'published' });
  });
  after(() => t.close());

  // Whether the page shows the user's name (as the author of a post, or in the account's pages).
  for (const [url, showsName] of [['/dashboard', true], ['/profile', true], ['/security', false], ['/user/api-tokens', false], ['/blog', true], ['/blog/wide-post', true]] as const) {
    it(`GET ${url} signed in: no character beyond Latin-1${showsName ? ', the name as references' : ''}`, async () => {
      const response = await client.get(url);
      assert.equal(response.statusCode, 200);
      assert.doesNotMatch(response.body, BEYOND_LATIN1, `${url} wrote a character beyond Latin-1 as itself`);
      if (showsName) assert.ok(response.body.includes('Zo\u00eb &#x201c;&#x3a9;&#x201d; &#x1f600;'), 'the name, as references');
    });
  }

  it("the security page's own translated text and the post's body and title come out as references", async () => {
    assert.match((await client.get('/security')).body, /&#x201c;Work laptop&#x201d;/);
    const post = (await client.get('/blog/wide-post')).body;
    assert.ok(post.includes('Body with &#x2019; and &#x65e5;&#x672c;&#x8a9e; and &#x1f600;.'), 'the body, rendered raw, as references');
    assert.ok(post.includes('It&#x2019;s &#x201c;quoted&#x201d; &#x1f600;'), 'the title, escaped, as references');
  });

  it("the panel's post form and its preview", async () => {
    const { client: admin } = await signedInAdmin(t);
    const post = await t.app.db.kysely.selectFrom('posts').select('id').where('slug', '=', 'wide-post').executeTakeFirstOrThrow();
    const response = await admin.get(`/admin/posts/${post.id}/edit`);
    assert.equal(response.statusCode, 200);
    assert.doesNotMatch(response.body, BEYOND_LATIN1);
    assert.ok(response.body.includes('<p>Body with &#x2019; and &#x65e5;&#x672c;&#x8a9e; and &#x1f600;.</p>'), 'the preview, as references');
  });
});
