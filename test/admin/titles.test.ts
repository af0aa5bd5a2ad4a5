// The panel's page titles name the page, then the panel once: "Users · Tessera admin", never
// "Administration · Tessera administration". A title repeats no word, nor a word that begins
// another ("admin" and "administration" count as one), in English and French.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { buildTestApp, type TestApp } from '../helpers.js';
import { WebClient } from '../support/client.js';
import { decode, signedInAdmin } from './support.js';

const titleOf = (html: string) => decode(/<title>([^<]*)<\/title>/.exec(html)?.[1] ?? '');

/** The words of a title that repeat an earlier one, or share its start (4 letters at least). */
function repeatedWords(title: string): string[] {
  const words = title.toLowerCase().split(/[^\p{L}\p{N}]+/u).filter((word) => word.length >= 4);
  return words.filter((word, i) => words.slice(0, i).some((earlier) => earlier.startsWith(word) || word.startsWith(earlier)));
}

const PAGES = ['/admin', '/admin/users', '/admin/posts', '/admin/settings', '/admin/tokens', '/admin/audit', '/admin/users/new', '/admin/posts/new', '/admin/settings/new'];

describe('panel page titles', () => {
  let t: TestApp;
  let client: WebClient;
  before(async () => {
    t = await buildTestApp();
    ({ client } = await signedInAdmin(t, { name: 'Grace Hopper' }));
  });
  after(() => t.close());

  it('finds repeated words the way the titles below are checked', () => {
    assert.deepEqual(repeatedWords('Administration · Tessera administration'), ['administration']);
    assert.deepEqual(repeatedWords('Administration · Tessera admin'), ['admin']);
    assert.deepEqual(repeatedWords('Users · Tessera admin'), []);
  });

  it('titles the login page "Log in · Tessera admin" and "Connexion · Administration de Tessera"', async () => {
    const guest = new WebClient(t.app);
    assert.equal(titleOf((await guest.get('/admin/login')).body), 'Log in · Tessera admin');
    assert.equal(titleOf((await guest.get('/admin/login', { 'accept-language': 'fr' })).body), 'Connexion · Administration de Tessera');
  });

  for (const locale of ['en', 'fr']) {
    it(`repeats no word in the title of a panel page (${locale})`, async () => {
      for (const url of PAGES) {
        const response = await client.get(url, { 'accept-language': locale });
        assert.equal(response.statusCode, 200, url);
        const title = titleOf(response.body);
        assert.match(title, locale === 'en' ? / · Tessera admin$/ : / · Administration de Tessera$/, url);
        assert.deepEqual(repeatedWords(title), [], `${url}: ${title}`);
      }
    });
  }
});
