// Generators of hostile input shared by the API and form fuzz suites: values of every wrong
// type, huge and deep ones, unicode and invalid UTF-8, injection and path-traversal strings.
import fc from 'fast-check';
import { percentEncode as encode } from '../security/support.js';

export { encode };

/**
 * The text a form field or query parameter carries for a generated value: a string as it is,
 * anything else as JSON (String() throws on an object whose own `toString` is not a function).
 */
export const asText = (value: unknown): string => (typeof value === 'string' ? value : (JSON.stringify(value) ?? ''));

/** Strings attackers try in slugs, ids and query parameters. */
export const NASTY_STRINGS = [
  '../../../../etc/passwd',
  '..%2f..%2f..%2fetc%2fpasswd',
  '%2e%2e%2f%2e%2e%2f',
  '....//....//',
  '..\\..\\windows\\win.ini',
  '/etc/passwd%00.md',
  "' OR '1'='1",
  "1' OR 1=1 --",
  "'; DROP TABLE users; --",
  '" OR ""="',
  '1; SELECT pg_sleep(5)',
  "' UNION SELECT password FROM users --",
  '<script>alert(1)</script>',
  '"><img src=x onerror=alert(1)>',
  '{{7*7}}',
  '<%= 7*7 %>',
  '${7*7}',
  'javascript:alert(1)',
  '\u0000',
  'a\u0000b',
  '\uD800',
  '\uDFFF\uD800',
  '\u202Etxt.exe',
  'Ⓐdmin@example.com',
  '\r\nSet-Cookie: x=1',
  '%00',
  '%FF%FE',
  '%',
  '%%32%65',
  'NaN',
  'Infinity',
  '-1',
  '0',
  '1e309',
  '9007199254740993',
  '99999999999999999999999999',
  'null',
  'undefined',
  'true',
  '[]',
  '{}',
  '__proto__',
  'constructor',
  'prototype',
  '',
  ' ',
  '\t',
  '💩'.repeat(300),
  'ǅ̸̢̡̛̛̛̗̘̙̜̝̞̟̠̣̤̥̦̩̪̫̬̭̮̯̰̱̲̳̹̺̻̼͇͈͉͍͎̀́̂̃̄̅̆̇̈̉̊̋̌̍̎̏̐̑̒̓̔̽̾̿̀́͂̓̈́͆͊͋͌̕̚ͅ͏͓͔͕͖͙͚͐͑͒͗͛ͣͤͥͦͧͨͩͪͫͬͭͮͯ͘͜͟͢͝͞͠͡',
];

const hugeString = fc.constantFrom('x'.repeat(256), 'y'.repeat(4097), 'é'.repeat(70_000), 'z'.repeat(300_000));

/** A string of any flavour: printable, full unicode (lone surrogates included), huge, nasty. */
export const anyString = fc.oneof(
  { weight: 3, arbitrary: fc.constantFrom(...NASTY_STRINGS) },
  { weight: 2, arbitrary: fc.string({ maxLength: 40 }) },
  { weight: 2, arbitrary: fc.string({ unit: 'grapheme', maxLength: 40 }) },
  { weight: 1, arbitrary: fc.string({ unit: 'binary', maxLength: 40 }) },
  { weight: 1, arbitrary: hugeString },
);

/** A JSON value of any type, wrong ones mostly. */
export const anyValue: fc.Arbitrary<unknown> = fc.oneof(
  { weight: 4, arbitrary: anyString },
  { weight: 1, arbitrary: fc.integer() },
  { weight: 1, arbitrary: fc.constantFrom(0, -1, 1.5, 2 ** 53, -(2 ** 63), 1e308) },
  { weight: 1, arbitrary: fc.boolean() },
  { weight: 1, arbitrary: fc.constant(null) },
  { weight: 1, arbitrary: fc.array(anyString, { maxLength: 3 }) },
  { weight: 1, arbitrary: fc.jsonValue({ maxDepth: 3 }) },
);

/**
 * Keys named like members of Object.prototype. JSON and form parsers make them own properties,
 * so they reach every map keyed by input: one that consults the prototype finds a function
 * where it expected nothing (a body with `"constructor": "a\u0000b"` answered 500).
 */
export const PROTOTYPE_KEYS = ['constructor', '__proto__', 'toString', 'hasOwnProperty', 'valueOf', 'prototype'] as const;

// C0 controls (NUL first), DEL, C1 controls and the Unicode line and paragraph separators.
const CONTROL_CHARS = [...Array.from({ length: 0x20 }, (_, code) => String.fromCharCode(code)), '\u007f', '\u0080', '\u0085', '\u009b', '\u009f', '\u2028', '\u2029'];

/** Text holding control characters, NUL most often. */
export const controlText = fc.oneof(
  { weight: 2, arbitrary: fc.constantFrom('a\u0000b', '\u0000', '\u0000\u0000\u0000', 'x\u0000') },
  {
    weight: 3,
    arbitrary: fc
      .tuple(fc.string({ maxLength: 4 }), fc.string({ unit: fc.constantFrom(...CONTROL_CHARS), minLength: 1, maxLength: 6 }), fc.string({ maxLength: 4 }))
      .map(([before, controls, after]) => `${before}${controls}${after}`),
  },
);

/** A value of every kind for such a key: control text, numbers, booleans, null, arrays, objects holding the same keys. */
export const prototypeKeyValue: fc.Arbitrary<unknown> = fc.oneof(
  { weight: 4, arbitrary: controlText },
  { weight: 1, arbitrary: anyString },
  { weight: 1, arbitrary: fc.oneof(fc.integer(), fc.double({ noNaN: true, noDefaultInfinity: true }), fc.constantFrom(0, -1, 2 ** 53, 1e308)) },
  { weight: 1, arbitrary: fc.boolean() },
  { weight: 1, arbitrary: fc.constant(null) },
  { weight: 1, arbitrary: fc.array(fc.oneof(controlText, fc.integer(), fc.boolean(), fc.constant(null)), { maxLength: 3 }) },
  { weight: 1, arbitrary: fc.dictionary(fc.constantFrom<string>(...PROTOTYPE_KEYS, 'a'), fc.oneof(controlText, fc.integer(), fc.constant(null)), { maxKeys: 3, noNullPrototype: true }) },
);

/** One to three such keys with their values, to add to a body or a query string. */
export const prototypeKeyFields: fc.Arbitrary<Record<string, unknown>> = fc.dictionary(fc.constantFrom<string>(...PROTOTYPE_KEYS), prototypeKeyValue, { minKeys: 1, maxKeys: 3 });

/**
 * Fixed values of every kind for the table tests. The last two are the shapes the JSON parser
 * refuses (a `__proto__` key, a `constructor` holding a `prototype`); JSON.parse makes the
 * first an own property, as a literal `{__proto__: …}` would not.
 */
export const PROTOTYPE_KEY_SAMPLES: readonly unknown[] = [
  'a\u0000b',
  '\u0000',
  '\u0001\u0007\b\t\n\u000b\f\r\u001b[31m\u007f\u0085\u2028',
  'plain text',
  '',
  0,
  -1.5,
  true,
  false,
  null,
  [],
  ['a\u0000b', 1, null],
  {},
  { a: 'a\u0000b', toString: 'x' },
  JSON.parse('{"__proto__":{"polluted":true}}') as unknown,
  { prototype: { polluted: true } },
];

/** Raw request bodies that are not a JSON object: deep nesting, invalid UTF-8, bad JSON. */
export const rawBodies = fc.constantFrom<Array<[string, string | Buffer]>>(
  ['deep array (10,000 levels)', `${'['.repeat(10_000)}${']'.repeat(10_000)}`],
  ['deep object (10,000 levels)', `${'{"a":'.repeat(10_000)}1${'}'.repeat(10_000)}`],
  ['deep object with a constructor key', `${'{"a":'.repeat(5_000)}{"constructor":{"prototype":{"x":1}}}${'}'.repeat(5_000)}`],
  ['deep array in a field', `{"email":${'['.repeat(10_000)}${']'.repeat(10_000)},"name":1}`],
  ['__proto__ key', '{"__proto__":{"is_admin":1},"name":"x"}'],
  ['invalid UTF-8 bytes', Buffer.from([0x7b, 0x22, 0x6e, 0x61, 0x6d, 0x65, 0x22, 0x3a, 0x22, 0xff, 0xfe, 0xc3, 0x28, 0x22, 0x7d])],
  ['overlong UTF-8 encoding of /', Buffer.from([0x7b, 0x22, 0x73, 0x6c, 0x75, 0x67, 0x22, 0x3a, 0x22, 0xc0, 0xaf, 0x22, 0x7d])],
  ['UTF-16 with a BOM', Buffer.from('\ufeff{"name":"x"}', 'utf16le')],
  ['truncated JSON', '{"email": "a@b.c", "password": '],
  ['JSON with comments', '{/* c */ "name": "x"}'],
  ['a bare string', '"just a string"'],
  ['a number', '42'],
  ['null', 'null'],
  ['an empty body', ''],
  ['whitespace', ' \n\t '],
  ['duplicate keys', '{"name":"a","name":{"$ne":null}}'],
  ['NUL bytes', '{"name":"a\\u0000b","email":"a\\u0000@b.c","title":"\\u0000"}'],
  ['Object.prototype names with NUL and control characters', '{"constructor":"a\\u0000b","toString":"\\u0001\\u001f","valueOf":"\\u0000","hasOwnProperty":"\\u007f","prototype":"\\u0000"}'],
  ['2 MiB of JSON (over the body limit)', `{"name":"${'n'.repeat(2 * 1024 * 1024)}"}`],
);

export const contentTypes = fc.constantFrom(
  'application/json',
  'application/json; charset=utf-8',
  'application/json; charset=utf-16',
  'application/vnd.api+json',
  'application/x-www-form-urlencoded',
  'multipart/form-data; boundary=----x',
  'text/plain',
  'text/html',
  'application/xml',
  'application/octet-stream',
  'application/json, text/html',
  '*/*',
  'garbage',
);

/** Odd headers: none must change the outcome into a 5xx or leak anything. */
export const oddHeaders: fc.Arbitrary<Record<string, string>> = fc.record(
  {
    accept: fc.constantFrom('application/json', 'text/html', '*/*', 'application/xml', '', 'garbage/;;;', 'application/json;q=0'),
    'accept-language': fc.constantFrom('fr', 'en', 'xx-YY', '*', ';q=x', 'a'.repeat(2000)),
    'x-forwarded-for': fc.constantFrom('1.2.3.4', 'not-an-ip', '::1, 10.0.0.1', ''),
    'x-forwarded-host': fc.constantFrom('evil.example', '"><script>'),
    'x-http-method-override': fc.constantFrom('DELETE', 'PUT', 'GET'),
    'if-none-match': fc.constantFrom('*', 'W/"x"', '"'),
    'x-requested-with': fc.constantFrom('XMLHttpRequest', 'x'),
    'x-xsrf-token': fc.constantFrom('x', ''),
    cookie: fc.constantFrom('tessera_session=garbage', 'tessera_session=s%3Ax.y', 'a=b; a=c', '=;;=', 'token=1%7Cabc'),
    origin: fc.constantFrom('http://evil.example', 'null'),
    referer: fc.constantFrom('http://evil.example/x', 'javascript:alert(1)'),
    'x-large': fc.constantFrom('h'.repeat(8_000)),
  },
  { requiredKeys: [] },
);

/** Query strings: known parameters with wrong values, unknown ones, repeats, raw bytes. */
export const queryStrings = fc.oneof(
  fc.constant(''),
  fc
    .array(
      fc.tuple(
        fc.constantFrom('page', 'per_page', 'locale', 'status', 'token', 'api_token', 'access_token', 'q', 'sort', 'page[]', 'include'),
        fc.oneof(anyString, fc.constantFrom('1', '2', '100', '101', '0', '-5', 'draft', 'archived', 'published', 'en', 'fr', 'pt-BR')),
      ),
      { maxLength: 4 },
    )
    .map((pairs) => pairs.map(([key, value]) => `${encode(key)}=${encode(value)}`).join('&')),
  fc.constantFrom('page=%FF%FE', 'locale=%C0%AF', 'a=%', '%=%', 'page=1&page=2', 'per_page[]=1', '&&&===', 'locale[$ne]=x'),
  prototypeKeyFields.map((fields) =>
    Object.entries(fields)
      .map(([key, value]) => `${encode(key)}=${encode(asText(value))}`)
      .join('&'),
  ),
);
