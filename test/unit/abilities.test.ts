// can(): the ability check routes use; parseAbilities(): reading the stored JSON list.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { can, parseAbilities } from '../../src/modules/tokens/abilities.js';

describe('can', () => {
  const cases: Array<[string[], 'posts:read' | 'posts:write', boolean]> = [
    [['*'], 'posts:read', true],
    [['*'], 'posts:write', true],
    [['posts:read'], 'posts:read', true],
    [['posts:read'], 'posts:write', false],
    [['posts:write'], 'posts:read', false],
    [['posts:read', 'posts:write'], 'posts:write', true],
    [[], 'posts:read', false],
    [['posts:*'], 'posts:write', false],
    [['POSTS:READ'], 'posts:read', false],
    [['posts:read '], 'posts:read', false],
  ];
  for (const [abilities, ability, expected] of cases) {
    it(`${expected ? 'allows' : 'refuses'} ${ability} for ${JSON.stringify(abilities)}`, () => {
      assert.equal(can(abilities, ability), expected);
    });
  }
});

describe('parseAbilities', () => {
  const cases: Array<[string, string[]]> = [
    ['["*"]', ['*']],
    ['["posts:read","posts:write"]', ['posts:read', 'posts:write']],
    ['[]', []],
    ['["posts:read",1,null,{}]', ['posts:read']],
    ['{"0":"*"}', []],
    ['"*"', []],
    ['null', []],
    ['not json', []],
    ['', []],
  ];
  for (const [json, expected] of cases) {
    it(`reads ${JSON.stringify(json)} as ${JSON.stringify(expected)}`, () => {
      assert.deepEqual(parseAbilities(json), expected);
    });
  }
});
