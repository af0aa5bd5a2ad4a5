// How the site shows a post on its page (the blog's lists and post page), and the editor's
// preview with it: the post's date, and its body's wide blocks made reachable by keyboard.

import { formatDate, type DateTimeStyle } from '../i18n/formats.js';

/** The style of a post's date, in UTC; the preview's script formats with the same options. */
export const POST_DATE_STYLE: DateTimeStyle = { dateStyle: 'long' };

/** A post's date as a reader of `locale` sees it on the site, in UTC (the site has no time zone of its own). */
export function postDate(iso: string | null, locale: string): { iso: string; text: string } | null {
  if (iso === null) return null;
  const date = new Date(iso);
  return { iso: date.toISOString(), text: formatDate(locale, POST_DATE_STYLE, date) };
}

/**
 * A code block or a table wider than a phone scrolls inside itself (app.css): a keyboard user
 * must be able to focus it to scroll it. The sanitized HTML gives these tags no attribute, so the
 * exact tags are what to look for (a `<pre>` written in the text is escaped, never this string).
 * The preview's script does the same to what it renders.
 */
export const keyboardScrollable = (html: string): string => html.replaceAll('<pre>', '<pre tabindex="0">').replaceAll('<table>', '<table tabindex="0">');
