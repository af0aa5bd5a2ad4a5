// The panel's table parameters: what a query string may ask for, read into safe values.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { containsPattern, pageWindow, parseListParams } from '../../src/modules/admin/listing.js';

const SORTS = ['name', 'created_at'] as const;
const DEFAULTS = { sort: 'created_at', dir: 'desc' } as const;

describe('parseListParams', () => {
  const cases = [
    { name: 'nothing given: the defaults', query: {}, expect: { search: '', sort: 'created_at', dir: 'desc', page: 1 } },
    { name: 'every value given', query: { q: ' ada ', sort: 'name', dir: 'asc', page: '3' }, expect: { search: 'ada', sort: 'name', dir: 'asc', page: 3 } },
    { name: 'a column outside the allowlist', query: { sort: 'password' }, expect: { search: '', sort: 'created_at', dir: 'desc', page: 1 } },
    { name: 'SQL in the sort', query: { sort: 'name; drop table users' }, expect: { search: '', sort: 'created_at', dir: 'desc', page: 1 } },
    { name: 'a direction that is not one', query: { dir: 'up' }, expect: { search: '', sort: 'created_at', dir: 'desc', page: 1 } },
    { name: 'page zero', query: { page: '0' }, expect: { search: '', sort: 'created_at', dir: 'desc', page: 1 } },
    { name: 'a negative page', query: { page: '-2' }, expect: { search: '', sort: 'created_at', dir: 'desc', page: 1 } },
    { name: 'a fractional page', query: { page: '1.5' }, expect: { search: '', sort: 'created_at', dir: 'desc', page: 1 } },
    { name: 'a huge page', query: { page: '1e300' }, expect: { search: '', sort: 'created_at', dir: 'desc', page: 1 } },
    { name: 'repeated parameters: the first counts', query: { q: ['a', 'b'], sort: ['name', 'created_at'] }, expect: { search: 'a', sort: 'name', dir: 'desc', page: 1 } },
    { name: 'a search of 500 characters: cut to 100', query: { q: 'x'.repeat(500) }, expect: { search: 'x'.repeat(100), sort: 'created_at', dir: 'desc', page: 1 } },
  ];
  for (const row of cases) {
    it(`reads ${row.name}`, () => {
      assert.deepEqual(parseListParams(row.query, SORTS, DEFAULTS), { ...row.expect, perPage: 15 });
    });
  }
  it('reads a query that is not an object as the defaults', () => {
    assert.deepEqual(parseListParams(null, SORTS, DEFAULTS), { search: '', sort: 'created_at', dir: 'desc', page: 1, perPage: 15 });
  });
});

describe('pageWindow', () => {
  const cases = [
    { total: 0, page: 1, expect: { page: 1, lastPage: 1, offset: 0 } },
    { total: 15, page: 1, expect: { page: 1, lastPage: 1, offset: 0 } },
    { total: 16, page: 2, expect: { page: 2, lastPage: 2, offset: 15 } },
    { total: 16, page: 9, expect: { page: 2, lastPage: 2, offset: 15 } },
  ];
  for (const row of cases) {
    it(`keeps page ${row.page} of ${row.total} items within 1..last`, () => assert.deepEqual(pageWindow(row.total, row.page, 15), row.expect));
  }
});

describe('containsPattern', () => {
  it('escapes the LIKE wildcards and the escape character, and lowers the case', () => {
    assert.equal(containsPattern('100%_A\\b'), '%100\\%\\_a\\\\b%');
  });
});
