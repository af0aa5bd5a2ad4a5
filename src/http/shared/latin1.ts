// Pages as Latin-1 strings. V8 keeps a string whose every character fits in a byte as one byte a
// character, and any other as two; writing a page to the socket encodes it to UTF-8 twice (its
// length, then its bytes), and a two-byte string takes the slow, character by character way:
// one “ in a translation made the whole /security page two-byte, and that encoding a fifth of
// the page's instructions (docs/performance.md). So what a page writes beyond Latin-1 goes out as
// a numeric character reference (&#x201c;), which the browser shows as the same character: the
// templates' escaping does it for every value (names, titles, translations), and latin1Html for
// HTML that is written raw (a post's body). The views' own text holds no such character
// (test/web/latin1-pages.test.ts). Pages have no inline script or style, where a reference would
// show as written.

/** A character beyond Latin-1: a surrogate pair (one character, one reference) or one code unit. */
const WIDE = /[\ud800-\udbff][\udc00-\udfff]|[\u0100-\uffff]/g;
const HAS_WIDE = /[\u0100-\uffff]/;
const ESCAPED = /[&<>"'\u0100-\uffff]/;
const ESCAPES = /[&<>"']|[\ud800-\udbff][\udc00-\udfff]|[\u0100-\uffff]/g;
const NAMED: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' };

const reference = (character: string): string => NAMED[character] ?? `&#x${character.codePointAt(0)!.toString(16)};`;

/**
 * A string of Latin-1 characters held two bytes a character (what String.prototype.replace
 * returns from a two-byte string, whatever it replaced) copied into one byte a character.
 */
const oneByte = (text: string): string => Buffer.from(text, 'latin1').toString('latin1');

/** Text for HTML (a value in a template): escaped as Eta does, and beyond Latin-1 as references. */
export function escapeHtml(value: unknown): string {
  const text = String(value);
  if (!ESCAPED.test(text)) return text;
  const escaped = text.replace(ESCAPES, reference);
  return HAS_WIDE.test(text) ? oneByte(escaped) : escaped;
}

/** HTML written raw into a page (a post's rendered body), with what is beyond Latin-1 as references. */
export function latin1Html(html: string): string {
  return HAS_WIDE.test(html) ? oneByte(html.replace(WIDE, reference)) : html;
}
