// Page links: absolute, keeping every other query parameter, setting `page`.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { pageLinks } from '../../src/http/api/pagination.js';

const BASE = 'https://blog.example/api/posts';
const pageOf = (url: string | null) => (url === null ? null : new URL(url).searchParams.get('page'));

describe('pageLinks', () => {
  it('points first, prev, next and last at their pages in the middle of a list', () => {
    const links = pageLinks(BASE, { page: 3, per_page: 10 }, 3, 5);
    assert.deepEqual([links.first, links.prev, links.next, links.last].map(pageOf), ['1', '2', '4', '5']);
  });

  it('has no prev on the first page and no next on the last', () => {
    assert.equal(pageLinks(BASE, {}, 1, 4).prev, null);
    assert.equal(pageLinks(BASE, {}, 4, 4).next, null);
    const single = pageLinks(BASE, {}, 1, 1);
    assert.equal(single.prev, null);
    assert.equal(single.next, null);
    assert.equal(pageOf(single.first), '1');
    assert.equal(pageOf(single.last), '1');
  });

  it('keeps the other parameters, with their values encoded, and one page parameter', () => {
    const links = pageLinks(BASE, { locale: 'pt-BR', per_page: 5, q: 'a&b=c d', page: 2 }, 2, 3);
    for (const url of [links.first, links.next, links.prev, links.last]) {
      assert.ok(url !== null && url.startsWith(`${BASE}?`));
      const params = new URL(url).searchParams;
      assert.equal(params.get('locale'), 'pt-BR');
      assert.equal(params.get('per_page'), '5');
      assert.equal(params.get('q'), 'a&b=c d');
      assert.equal(params.getAll('page').length, 1);
    }
  });

  it('leaves out parameters without a value', () => {
    const params = new URL(pageLinks(BASE, { locale: undefined, status: null }, 1, 1).first).searchParams;
    assert.deepEqual([...params.keys()], ['page']);
  });

  // As Laravel's paginator (issue 28 §7): a page past the last is an empty page like any other,
  // its prev the page before it, never a jump back to the last.
  it('on a page past the last, has no next, a prev one less than itself and the last page as last', () => {
    const links = pageLinks(BASE, {}, 9, 3);
    assert.equal(links.next, null);
    assert.equal(pageOf(links.prev), '8');
    assert.equal(pageOf(links.last), '3');
    assert.equal(pageOf(links.first), '1');
  });
});
