// Where a reader finds posts on the site. A post in the site's default language lives at
// /blog/{slug}; a post in another language at /blog/{slug}?locale={locale}, so that each
// translation of a slug has its own address (canonical URLs, hreflang alternates, the sitemap
// and the feeds all use these). The lists follow the same rule: /blog, /blog?locale=fr.

/** The path of a post, given the site's default locale. */
export function postPath(post: { slug: string; locale: string }, defaultLocale: string): string {
  const path = `/blog/${encodeURIComponent(post.slug)}`;
  return post.locale === defaultLocale ? path : `${path}?locale=${encodeURIComponent(post.locale)}`;
}

/** The path of a page of a locale's list (page 1 has no `page` parameter). */
export function blogPath(locale: string, page: number, defaultLocale: string): string {
  const query = new URLSearchParams();
  if (locale !== defaultLocale) query.set('locale', locale);
  if (page > 1) query.set('page', String(page));
  const search = query.toString();
  return search === '' ? '/blog' : `/blog?${search}`;
}

/** A language's name in itself ("fr" is "français"); the code when the runtime does not know it. */
export function languageName(code: string, inLocale: string = code): string {
  try {
    return new Intl.DisplayNames([inLocale], { type: 'language' }).of(code) ?? code;
  } catch {
    return code;
  }
}

/**
 * A locale's feed title, the same in the feed itself and in the pages that link to it: the
 * site's name, and another language than the default by its own name ("Carnets (français)").
 */
export function feedTitle(siteName: string, locale: string, defaultLocale: string): string {
  return locale === defaultLocale ? siteName : `${siteName} (${languageName(locale)})`;
}
