// The site's own settings as named, typed fields: what each may hold, checked once here for the
// panel's form (and any other face that writes them), so that a `posts_per_page` of 0 or "abc"
// is refused rather than stored and silently ignored, and GET /api/settings can promise a type.
import { LOCALES, isLocale, type Locale } from '../i18n/translator.js';
import type { FieldMessages } from '../shared/errors.js';
import { MAX_POSTS_PER_PAGE, normalLocale, type SiteKey } from './site.js';

/** What the form sends: texts as typed, the offered languages as the ticked boxes. */
export type SiteFormInput = {
  site_name: string;
  site_description: string;
  home_headline: string;
  home_intro: string;
  home_api_card: boolean;
  default_locale: string;
  locales: readonly string[];
  posts_per_page: string;
};

/** The typed values a valid form stores, one setting each. */
export type SiteValues = {
  site_name: string;
  site_description: string;
  home_headline: string;
  home_intro: string;
  home_api_card: boolean;
  default_locale: Locale;
  locales: string[];
  posts_per_page: number;
} & Record<SiteKey, unknown>;

/** The longest text each field takes, in characters. */
export const SITE_TEXT_MAX = { site_name: 100, site_description: 300, home_headline: 150, home_intro: 600 } as const;

const WHOLE_NUMBER = /^\s*\d{1,7}\s*$/;

/**
 * The values to store from the form, or every field's error at once. `storedLocales` are the
 * languages the `locales` setting names now: one the interface has no messages for (a post may
 * be written in German first) cannot be ticked on the form, so it is kept rather than dropped
 * unseen.
 */
export function checkSiteForm(input: SiteFormInput, storedLocales: readonly string[]): { values: SiteValues; errors: FieldMessages } {
  const errors: FieldMessages = {};
  const texts = Object.fromEntries(
    (Object.keys(SITE_TEXT_MAX) as (keyof typeof SITE_TEXT_MAX)[]).map((name) => {
      const value = input[name].trim();
      if (value.length > SITE_TEXT_MAX[name]) errors[name] = [{ key: 'validation.max.string', attribute: name, replace: { max: SITE_TEXT_MAX[name] } }];
      return [name, value];
    }),
  ) as Record<keyof typeof SITE_TEXT_MAX, string>;
  if (texts.site_name === '') errors.site_name = [{ key: 'validation.required', attribute: 'site_name' }];

  const perPage = WHOLE_NUMBER.test(input.posts_per_page) ? Number(input.posts_per_page) : NaN;
  if (!(perPage >= 1 && perPage <= MAX_POSTS_PER_PAGE)) errors.posts_per_page = [{ key: 'settings_form.errors.posts_per_page', replace: { max: MAX_POSTS_PER_PAGE } }];

  const defaultLocale = isLocale(input.default_locale) ? input.default_locale : null;
  if (defaultLocale === null) errors.default_locale = [{ key: 'validation.in', attribute: 'default_locale' }];
  // Only languages with translations can be ticked; anything else sent is refused, not ignored.
  const ticked = [...new Set(input.locales)];
  if (ticked.some((code) => !isLocale(code))) errors.locales = [{ key: 'validation.in', attribute: 'locales' }];
  else if (ticked.length === 0) errors.locales = [{ key: 'settings_form.errors.locales_required' }];
  else if (defaultLocale !== null && !ticked.includes(defaultLocale)) errors.default_locale = [{ key: 'settings_form.errors.default_offered' }];
  const kept = storedLocales.map(normalLocale).filter((tag): tag is string => tag !== null && !isLocale(tag));

  return {
    values: {
      ...texts,
      home_api_card: input.home_api_card,
      default_locale: defaultLocale ?? 'en',
      locales: [...LOCALES.filter((code) => ticked.includes(code)), ...new Set(kept)],
      posts_per_page: perPage,
    },
    errors,
  };
}
