// The settings a reader sees the effect of: the site's name (page titles, the header), its
// description, its default language, the languages it offers, how many posts a page of the
// blog shows and the home page's headline, introduction and API card. Read from the settings table
// whether public or not (the public flag says what GET /api/settings shows, not what applies);
// a missing or unusable value falls back to the configuration (APP_NAME, APP_LOCALE).
//
// Two lists of languages: `contentLocales` are those the `locales` setting names, plus the
// default (the API's `locale` filter accepts these: a post may be written in German before the
// interface speaks it); null without a usable setting, where any well-formed tag is accepted as
// before. `interfaceLocales` are those of them the service has messages for (src/locales/): the
// language switch offers only these, and a visitor is never shown another.
import { LOCALES, isLocale, type Locale } from '../i18n/translator.js';

export const SITE_KEYS = ['site_name', 'site_description', 'home_headline', 'home_intro', 'home_api_card', 'default_locale', 'locales', 'posts_per_page'] as const;
export type SiteKey = (typeof SITE_KEYS)[number];

/** A key the site form owns: edited there (empty means the default), never deleted. */
export function isSiteKey(key: string): key is SiteKey {
  return (SITE_KEYS as readonly string[]).includes(key);
}

/** Posts on a page of the blog when `posts_per_page` is missing or unusable (the API's default too). */
export const DEFAULT_POSTS_PER_PAGE = 15;
/** The most a page of the blog shows (the API's per_page maximum). */
export const MAX_POSTS_PER_PAGE = 100;

export type SiteSettings = {
  name: string;
  description: string | null;
  defaultLocale: Locale;
  interfaceLocales: readonly Locale[];
  contentLocales: readonly string[] | null;
  /** Posts on a page of the blog (/blog, the home page), 1..100. */
  postsPerPage: number;
  /** The home page's headline and introduction; null shows the default (the name; the description, else a translated text). */
  headline: string | null;
  intro: string | null;
  /** Whether the home page shows the card about the API (on unless turned off). */
  apiCard: boolean;
};

/** What applies before any setting exists. */
export type SiteDefaults = { appName: string; locale: string };

const LOCALE_TAG = /^[A-Za-z]{2,3}(-[A-Za-z0-9]{2,8})*$/;

/**
 * A language tag in BCP 47's usual case, the one posts are stored with ("FR" is "fr", "pt-br"
 * is "pt-BR", "zh-hant" is "zh-Hant"); null when it is not a tag.
 */
export function normalLocale(value: unknown): string | null {
  if (typeof value !== 'string' || !LOCALE_TAG.test(value.trim())) return null;
  return value
    .trim()
    .split('-')
    .map((part, index) => {
      if (index > 0 && part.length === 2) return part.toUpperCase();
      if (index > 0 && part.length === 4) return part.charAt(0).toUpperCase() + part.slice(1).toLowerCase();
      return part.toLowerCase();
    })
    .join('-');
}

/**
 * `posts_per_page` as an integer of 1..100: a JSON number, or digits typed as text in the panel
 * ("10" and 10 mean the same to an editor); anything else is unusable (null).
 */
export function postsPerPage(value: unknown): number | null {
  const number = typeof value === 'string' && /^\s*\d{1,3}\s*$/.test(value) ? Number(value) : value;
  return typeof number === 'number' && Number.isInteger(number) && number >= 1 && number <= MAX_POSTS_PER_PAGE ? number : null;
}

function text(value: unknown): string | null {
  return typeof value === 'string' && value.trim() !== '' ? value.trim() : null;
}

/** The site settings from the stored values (key → decoded JSON value). */
export function siteSettings(values: Readonly<Record<string, unknown>>, defaults: SiteDefaults): SiteSettings {
  const fallback: Locale = isLocale(defaults.locale) ? defaults.locale : 'en';
  const wanted = normalLocale(values.default_locale);
  const defaultLocale: Locale = wanted !== null && isLocale(wanted) ? wanted : fallback;
  const listed = Array.isArray(values.locales) ? values.locales.map(normalLocale).filter((tag): tag is string => tag !== null) : [];
  // The default language is always offered; no usable list offers every language the service speaks.
  const content = listed.length > 0 ? [...new Set([...listed, defaultLocale])] : null;
  return {
    name: text(values.site_name) ?? defaults.appName,
    description: text(values.site_description),
    defaultLocale,
    interfaceLocales: content === null ? LOCALES : LOCALES.filter((code) => content.includes(code)),
    contentLocales: content,
    postsPerPage: postsPerPage(values.posts_per_page) ?? DEFAULT_POSTS_PER_PAGE,
    headline: text(values.home_headline),
    intro: text(values.home_intro),
    apiCard: values.home_api_card !== false,
  };
}
