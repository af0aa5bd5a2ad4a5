// Dates, relative times and lists in the reader's language. An Intl formatter costs tens of
// microseconds to build (it resolves the locale's data) and almost nothing to use, so each
// (locale, style) has one, built on first use and kept: a page listing fifteen posts built
// fifteen, and that was most of its time (docs/performance.md).

/** How much of a date and a time to show: Intl's own styles. Every time is shown in UTC. */
export type DateTimeStyle = { dateStyle: 'full' | 'long' | 'medium' | 'short'; timeStyle?: 'full' | 'long' | 'medium' | 'short' };

// The locale can come from a saved account setting; past this many formatters the rest are built
// per call, so no input can grow the process's memory without bound.
const MAX_KEPT = 64;
const kept = new Map<string, unknown>();

function keptFormatter<T>(key: string, build: () => T): T {
  const found = kept.get(key);
  if (found !== undefined) return found as T;
  const made = build();
  if (kept.size < MAX_KEPT) kept.set(key, made);
  return made;
}

// The texts are kept as well: a list page shows the same dates to every visitor, and a lookup
// costs a tenth of formatting. Emptied when full, for the same reason as the formatters.
const MAX_TEXTS = 4096;
const texts = new Map<string, string>();

/** The text kept under `key`, made by `make` the first time. */
function remembered(key: string, make: () => string): string {
  let text = texts.get(key);
  if (text === undefined) {
    text = make();
    if (texts.size >= MAX_TEXTS) texts.clear();
    texts.set(key, text);
  }
  return text;
}

const timeOf = (date: Date | string): string | number => (typeof date === 'string' ? date : date.getTime());

/** `date` (a Date or an ISO string) as the reader of `locale` writes it, in UTC (the service knows no reader's time zone). */
export function formatDate(locale: string, style: DateTimeStyle, date: Date | string): string {
  const styleKey = `${locale}|${style.dateStyle}|${style.timeStyle ?? ''}`;
  return remembered(`${styleKey}|${timeOf(date)}`, () => {
    const format = keptFormatter(`date|${styleKey}`, () => new Intl.DateTimeFormat(locale, { ...style, timeZone: 'UTC' }));
    return format.format(typeof date === 'string' ? new Date(date) : date);
  });
}

/** What a page shows where a moment is missing or unreadable. */
export const NO_MOMENT = '\u2014';

/** How the site and the panel show a moment: the date and the minute, one style for every page. */
const DATE_TIME: DateTimeStyle = { dateStyle: 'medium', timeStyle: 'short' };
const SPACE = /[ \u202f]/g;
const NO_BREAK = '\u00a0';

/**
 * A moment as every page shows it, in the reader's language and in UTC: "Nov 26, 2026, 3:11 PM
 * UTC", "26 nov. 2026, 15:11 UTC". The one format of the site's and the panel's dates and times.
 * A narrow column may wrap it between the date and the time only: every other space is a
 * no-break space (also in place of the narrow one some ICU versions put before "PM", which is
 * not Latin-1 and would make a whole page two-byte text). A date that is none: NO_MOMENT.
 */
export function formatDateTime(locale: string, date: Date | string): string {
  return remembered(`moment|${locale}|${timeOf(date)}`, () => {
    const moment = typeof date === 'string' ? new Date(date) : date;
    // A stored text that is no moment shows as a dash, as a missing one does, and is remembered
    // as such: no page parses the same text twice to find out.
    if (Number.isNaN(moment.getTime())) return NO_MOMENT;
    const format = keptFormatter(`date|${locale}|${DATE_TIME.dateStyle}|${DATE_TIME.timeStyle}`, () => new Intl.DateTimeFormat(locale, { ...DATE_TIME, timeZone: 'UTC' }));
    const parts = format.formatToParts(moment);
    const between = parts.findIndex((part) => part.type === 'hour') - 1;
    return `${parts.map((part, index) => (index === between ? part.value : part.value.replace(SPACE, NO_BREAK))).join('')}${NO_BREAK}UTC`;
  });
}

/** "5 minutes ago", "yesterday": `value` units from now (negative in the past). */
export function formatRelative(locale: string, value: number, unit: Intl.RelativeTimeFormatUnit): string {
  return keptFormatter(`relative|${locale}`, () => new Intl.RelativeTimeFormat(locale, { numeric: 'auto' })).format(value, unit);
}

/** "a, b or c" (`disjunction`) or "a, b and c" (`conjunction`) in `locale`. */
export function formatList(locale: string, items: readonly string[], type: 'conjunction' | 'disjunction'): string {
  return keptFormatter(`list|${locale}|${type}`, () => new Intl.ListFormat(locale, { type })).format(items);
}
