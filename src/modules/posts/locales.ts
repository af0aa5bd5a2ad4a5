// The languages a post may be written in: those the site offers (the `locales` setting and the
// default, SiteSettings.contentLocales), the same list GET /api/posts filters by. A post in any
// other language could never be listed nor fed. No usable setting (null) offers any tag.
import type { Message } from '../i18n/translator.js';
import { normalLocale } from '../settings/site.js';

/** The languages on offer now: a list, or null for any well-formed tag. */
export type OfferedLocales = () => readonly string[] | null | Promise<readonly string[] | null>;

/** The refusal of a language the site does not offer, on `locale`, in the reader's language. */
export const LOCALE_NOT_OFFERED: Message = { key: 'validation.in', attribute: 'locale' };

/** True when `locale` (already in its usual case) may be used for a post: a language tag, and one offered. */
export function offersLocale(offered: readonly string[] | null, locale: string): boolean {
  return offered === null ? normalLocale(locale) === locale : offered.includes(locale);
}

/** A tag in the case posts are stored with (FR is fr, pt-br is pt-BR); anything else unchanged. */
export function postLocale(locale: string): string {
  return normalLocale(locale) ?? locale;
}
