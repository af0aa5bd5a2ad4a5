// Dates, relative times and lists in the reader's language (modules/i18n/formats.ts): the texts
// the pages and mails show, in English and French, always in UTC, and one Intl formatter per
// locale and style for the life of the process rather than one per date shown.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { formatDate, formatDateTime, formatList, formatRelative } from '../../src/modules/i18n/formats.js';

const AT = '2026-03-01T23:30:05.000Z';

/** Runs `body` with Intl.DateTimeFormat counting how many formatters are built. */
function countingBuilds(body: () => void): number {
  const original = Intl.DateTimeFormat;
  let built = 0;
  const counting = function (this: unknown, ...args: ConstructorParameters<typeof Intl.DateTimeFormat>) {
    built += 1;
    return new original(...args);
  } as unknown as typeof Intl.DateTimeFormat;
  Intl.DateTimeFormat = counting;
  try {
    body();
  } finally {
    Intl.DateTimeFormat = original;
  }
  return built;
}

describe('formatDate', () => {
  const cases: { locale: string; style: Parameters<typeof formatDate>[1]; text: string }[] = [
    { locale: 'en', style: { dateStyle: 'long' }, text: 'March 1, 2026' },
    { locale: 'fr', style: { dateStyle: 'long' }, text: '1 mars 2026' },
    { locale: 'en', style: { dateStyle: 'medium', timeStyle: 'short' }, text: 'Mar 1, 2026, 11:30 PM' },
    { locale: 'fr', style: { dateStyle: 'medium', timeStyle: 'short' }, text: '1 mars 2026, 23:30' },
    { locale: 'en', style: { dateStyle: 'medium', timeStyle: 'long' }, text: 'Mar 1, 2026, 11:30:05 PM UTC' },
    { locale: 'fr', style: { dateStyle: 'full', timeStyle: 'long' }, text: 'dimanche 1 mars 2026 à 23:30:05 UTC' },
  ];
  for (const { locale, style, text } of cases) {
    it(`writes ${style.dateStyle}/${style.timeStyle ?? '-'} in ${locale} as "${text}", in UTC`, () => {
      // Intl puts narrow no-break spaces in some times; the pages show them as they come.
      assert.equal(formatDate(locale, style, AT).replace(/[\u202f\u00a0]/g, ' '), text);
      assert.equal(formatDate(locale, style, new Date(AT)), formatDate(locale, style, AT), 'a Date and its ISO string read the same');
    });
  }

  it('builds one formatter per locale and style, however many dates it writes', () => {
    const built = countingBuilds(() => {
      for (let day = 1; day <= 15; day += 1) formatDate('de', { dateStyle: 'short' }, `2026-01-${String(day).padStart(2, '0')}T00:00:00Z`);
      formatDate('de', { dateStyle: 'short', timeStyle: 'short' }, AT);
      formatDate('it', { dateStyle: 'short' }, AT);
    });
    assert.equal(built, 3);
  });

  it('writes a date the same again after thousands of other dates', () => {
    const first = formatDate('en', { dateStyle: 'medium', timeStyle: 'short' }, AT);
    for (let minute = 0; minute < 5_000; minute += 1) formatDate('en', { dateStyle: 'medium', timeStyle: 'short' }, new Date(Date.parse(AT) + minute * 60_000));
    assert.equal(formatDate('en', { dateStyle: 'medium', timeStyle: 'short' }, AT), first);
    assert.equal(formatDate('en', { dateStyle: 'medium', timeStyle: 'short' }, new Date(Date.parse(AT) + 4_999 * 60_000)).replace(/[\u202f\u00a0]/g, ' '), 'Mar 5, 2026, 10:49 AM');
  });

  it('still writes dates past the formatters it keeps', () => {
    for (let i = 0; i < 100; i += 1) formatDate(`en-u-nu-latn-x-k${i}`, { dateStyle: 'long' }, AT);
    assert.equal(formatDate('fr', { dateStyle: 'long' }, AT), '1 mars 2026');
    assert.equal(formatDate('en-x-past', { dateStyle: 'long' }, AT), 'March 1, 2026');
  });
});

describe('formatDateTime, the one format of a moment on the site and in the panel', () => {
  for (const [locale, text] of [['en', 'Mar 1, 2026, 11:30 PM UTC'], ['fr', '1 mars 2026, 23:30 UTC']] as const) {
    it(`writes a moment in ${locale} as "${text}"`, () => {
      assert.equal(formatDateTime(locale, AT).replace(/\u00a0/g, ' '), text);
      assert.equal(formatDateTime(locale, new Date(AT)), formatDateTime(locale, AT));
    });
  }

  it('may wrap only between the date and the time: every other space is a no-break space', () => {
    assert.deepEqual(formatDateTime('en', AT).split(' '), ['Mar\u00a01,\u00a02026,', '11:30\u00a0PM\u00a0UTC']);
    assert.deepEqual(formatDateTime('fr', AT).split(' '), ['1\u00a0mars\u00a02026,', '23:30\u00a0UTC']);
  });

  it('writes a dash for a text that is no moment, the second time as the first', () => {
    assert.equal(formatDateTime('en', 'yesterday'), '\u2014');
    assert.equal(formatDateTime('en', 'yesterday'), '\u2014');
    assert.equal(formatDateTime('fr', new Date(Number.NaN)), '\u2014');
  });

  it('keeps every character in Latin-1 (a narrow no-break space would make a page two-byte text)', () => {
    for (const locale of ['en', 'fr']) assert.deepEqual([...formatDateTime(locale, AT)].filter((char) => char.charCodeAt(0) > 0xff), [], locale);
  });
});

describe('formatRelative and formatList', () => {
  it('writes a time ago in the reader language', () => {
    assert.equal(formatRelative('en', -5, 'minute'), '5 minutes ago');
    assert.equal(formatRelative('fr', -1, 'day'), 'hier');
  });

  it('joins a list with "or" in the reader language', () => {
    assert.equal(formatList('en', ['a passkey', 'Corp ID', 'GitHub'], 'disjunction'), 'a passkey, Corp ID, or GitHub');
    assert.equal(formatList('fr', ['une clé d’accès', 'Corp ID'], 'disjunction'), 'une clé d’accès ou Corp ID');
  });
});
