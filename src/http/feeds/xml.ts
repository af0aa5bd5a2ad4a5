// XML written by hand, safely by construction: `xml` is a tagged template that escapes every
// interpolated string, so a post's title or body can never end an element or open a CDATA
// section; only what `xml` itself made is inserted as it is.

/** A piece of XML made by `xml` (already escaped). */
export class Xml {
  constructor(readonly text: string) {}
  toString(): string {
    return this.text;
  }
}

const ENTITIES: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&apos;' };

// Characters XML 1.0 cannot carry at all, escaped or not (most C0 controls, lone surrogates,
// U+FFFE and U+FFFF): one in a post title would make the whole feed unreadable, so it is dropped.
const NOT_XML = /[^\t\n\r\u0020-\uD7FF\uE000-\uFFFD\u{10000}-\u{10FFFF}]/gu;

/** Text as element content or an attribute value (either quote). */
export function escapeXml(value: string): string {
  return value.replace(NOT_XML, '').replace(/[&<>"']/g, (char) => ENTITIES[char] ?? char);
}

type Part = string | Xml | readonly Xml[] | null;

/** XML with the interpolated strings escaped; `Xml` parts (and lists of them) go in as they are, null as nothing. */
export function xml(strings: TemplateStringsArray, ...parts: Part[]): Xml {
  let text = strings[0] ?? '';
  parts.forEach((part, index) => {
    const inserted = part === null ? '' : typeof part === 'string' ? escapeXml(part) : part instanceof Xml ? part.text : part.map((each) => each.text).join('');
    text += inserted + (strings[index + 1] ?? '');
  });
  return new Xml(text);
}

/** A time as RFC 3339 in UTC, the form Atom and the sitemap protocol both read. */
export function instant(iso: string): string {
  return new Date(iso).toISOString();
}

/** When a published post last changed for a reader: its last edit, or its publication if later (a post written before its scheduled time). */
export function changedAt(post: { published_at: string; updated_at: string }): string {
  return new Date(Math.max(Date.parse(post.published_at), Date.parse(post.updated_at))).toISOString();
}

/** The latest of times written by `instant` (their text sorts as their time), or null for none. */
export function latest(times: readonly string[]): string | null {
  return times.reduce<string | null>((newest, each) => (newest === null || each > newest ? each : newest), null);
}
