// Slugs generated from titles.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { SLUG_PATTERN, slugify } from '../../src/modules/posts/slug.js';

describe('slugify', () => {
  const cases: Array<[string, string]> = [
    ['Hello World', 'hello-world'],
    ['  Hello,   World!  ', 'hello-world'],
    ['Café crème brûlée', 'cafe-creme-brulee'],
    ['Version 2.0 -- released', 'version-2-0-released'],
    ['***', ''],
    ['日本語', ''],
  ];
  for (const [title, slug] of cases) {
    it(`turns ${JSON.stringify(title)} into ${JSON.stringify(slug)}`, () => {
      assert.equal(slugify(title), slug);
      if (slug !== '') assert.match(slug, new RegExp(SLUG_PATTERN));
    });
  }

  it('keeps long slugs at 200 characters at most, without a trailing dash', () => {
    const slug = slugify('word '.repeat(100));
    assert.ok(slug.length <= 200);
    assert.match(slug, new RegExp(SLUG_PATTERN));
  });
});
