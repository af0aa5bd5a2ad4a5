// The interface text conventions (docs/decisions.md, "Interface text"): buttons, headings, titles
// and other labels are in sentence case in English and French — a capital on the first word only,
// beyond it only on proper nouns and acronyms of a short explicit list — and no template holds
// text of its own: every word a visitor reads comes from src/locales/{en,fr}.
import assert from 'node:assert/strict';
import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';

const LOCALES = new URL('../../src/locales/', import.meta.url);
const VIEWS = new URL('../../src/views/', import.meta.url);

/** Words that keep their capitals inside a label: proper nouns and acronyms. */
const PROPER = new Set(['API', 'Atom', 'CSRF', 'GET', 'HTML', 'IP', 'JSON', 'Laravel', 'OpenAPI', 'PostgreSQL', 'QR', 'SQLite', 'Tessera', 'TOTP', 'URL', 'UTC']);

/**
 * A label is a message that is not a sentence: it does not end with a full stop, has no sentence
 * break inside, and has at most eight words (buttons, headings, titles, links, column names, mail
 * subjects). Sentences may name things ("the Security page") and are left to the translator.
 */
function isLabel(text: string): boolean {
  const trimmed = text.trim();
  return !/[^.]\.$/.test(trimmed) && !/[.!?]\s/.test(trimmed) && trimmed.split(/\s+/).length <= 8;
}

/** The words of a label after the first that start with a capital and are not on the list. */
function titleCaseWords(label: string): string[] {
  return label
    .trim()
    .split(/\s+/)
    .slice(1)
    .filter((word) => !word.startsWith(':'))
    .map((word) => word.replace(/^[“”"«»()[\],;:·—–!?.…'’]+|[“”"«»()[\],;:·—–!?.…'’]+$/g, ''))
    .filter((word) => /^\p{Lu}/u.test(word) && !PROPER.has(word));
}

function messages(locale: string): [file: string, key: string, text: string][] {
  const folder = new URL(`${locale}/`, LOCALES);
  return readdirSync(folder)
    .filter((file) => file.endsWith('.json'))
    .flatMap((file) => Object.entries(JSON.parse(readFileSync(new URL(file, folder), 'utf8')) as Record<string, string>).map(([key, text]): [string, string, string] => [file, key, text]));
}

function templates(folder: string): string[] {
  return readdirSync(folder, { withFileTypes: true }).flatMap((entry) =>
    entry.isDirectory() ? templates(join(folder, entry.name)) : entry.name.endsWith('.eta') ? [join(folder, entry.name)] : [],
  );
}

describe('interface text', () => {
  it('tells labels from sentences and finds Title Case words beyond the first', () => {
    assert.equal(isLabel('Create API token'), true);
    assert.equal(isLabel('Delete this user?'), true);
    assert.equal(isLabel('Your password has been reset.'), false);
    assert.equal(isLabel('Log in to continue. Or register'), false);
    assert.deepEqual(titleCaseWords('Create API Token'), ['Token']);
    assert.deepEqual(titleCaseWords('Revoke All API Tokens'), ['All', 'Tokens']);
    assert.deepEqual(titleCaseWords('New Sign-in to Your Account'), ['Sign-in', 'Your', 'Account']);
    assert.deepEqual(titleCaseWords('Your new token “:name”'), []);
    assert.deepEqual(titleCaseWords('Adresse IP : :ip'), []);
    assert.deepEqual(titleCaseWords('Log out'), []);
  });

  for (const locale of ['en', 'fr']) {
    it(`writes every button, heading and title in sentence case (${locale})`, () => {
      const labels = messages(locale).filter(([, , text]) => isLabel(text));
      assert.ok(labels.length > 100, `labels found: ${labels.length}`);
      const offenders = labels.filter(([, , text]) => titleCaseWords(text).length > 0).map(([file, key, text]) => `${file} ${key}: ${text}`);
      assert.deepEqual(offenders, []);
    });
  }

  it('keeps no visible text in the templates: every word comes from the locale files', () => {
    const files = templates(VIEWS.pathname);
    assert.ok(files.length > 40, `templates found: ${files.length}`);
    const found: string[] = [];
    for (const file of files) {
      const source = readFileSync(file, 'utf8').replace(/<%[\s\S]*?%>/g, '').replace(/<!--[\s\S]*?-->/g, '');
      // Attributes a person reads; `value` and `content` carry machine values (viewport, noindex, a button's name).
      for (const match of source.matchAll(/\s(aria-label|title|placeholder|alt)="([^"]*)"/g)) {
        if (/\p{L}/u.test(match[2] ?? '')) found.push(`${file}: ${match[1]}="${match[2]}"`);
      }
      // Character references stand for the character they name: a dash written `&mdash;` (so a
      // page stays one-byte text) is punctuation, not a word; a word spelled with references is still a word.
      const named: Record<string, string> = { mdash: '—', ndash: '–', nbsp: ' ', hellip: '…', middot: '·', times: '×' };
      const decoded = source
        .replace(/&#x([0-9a-f]+);/gi, (_all, hex: string) => String.fromCodePoint(parseInt(hex, 16)))
        .replace(/&#(\d+);/g, (_all, decimal: string) => String.fromCodePoint(Number(decimal)))
        .replace(/&(mdash|ndash|nbsp|hellip|middot|times);/g, (_all, name: string) => named[name] ?? '');
      const text = decoded.replace(/<[^>]*>/g, ' ');
      for (const match of text.matchAll(/\S*\p{L}\S*/gu)) found.push(`${file}: ${match[0]}`);
    }
    assert.deepEqual(found, []);
  });
});
