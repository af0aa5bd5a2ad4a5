// GET /sitemap.xml: the sitemaps.org 0.9 list of the public site's pages: the home page, the
// blog list of each language the site offers and every published post, each post with its
// translations (posts sharing its slug) as hreflang alternates in Google's documented form
// (xhtml:link, every version listing all of them and itself, and the address that picks by
// language as x-default), the same alternates the pages' heads carry.
import type { FastifyInstance } from 'fastify';
import { nextPublication, publishedAddresses, type PublishedAddress } from '../../modules/posts/published.repository.js';
import { keptDocument } from '../../perf/kept-reads.js';
import { blogPath, postPath } from '../../modules/posts/urls.js';
import type { SiteSettings } from '../../modules/settings/site.js';
import { changedAt, latest, xml, type Xml } from './xml.js';
import { FEED_CACHE, sendDocument } from './send.js';

/**
 * The protocol's limit of addresses in one sitemap. Beyond it the oldest posts are left out
 * (the list is newest first); a site that large needs a sitemap index pointing at several
 * sitemaps, which this service does not write yet.
 */
export const MAX_URLS = 50_000;

type Alternate = { hreflang: string; href: string };

/** The languages whose blog list the site offers: the `locales` setting, else those it speaks (as the pages' heads). */
export function listLocales(site: SiteSettings): readonly string[] {
  return site.contentLocales ?? site.interfaceLocales;
}

function url(loc: string, lastmod: string | null, alternates: readonly Alternate[]): Xml {
  const links = alternates.map((each) => xml`
    <xhtml:link rel="alternate" hreflang="${each.hreflang}" href="${each.href}"/>`);
  return xml`
  <url>
    <loc>${loc}</loc>${lastmod === null ? null : xml`
    <lastmod>${lastmod}</lastmod>`}${links}
  </url>`;
}

/** The sitemap document; `posts` newest first, as many as fit beside the lists. */
export function sitemap(site: SiteSettings, appUrl: string, posts: readonly PublishedAddress[]): string {
  const absolute = (path: string) => `${appUrl}${path}`;
  const locales = listLocales(site);
  const listOf = (locale: string) => absolute(blogPath(locale, 1, site.defaultLocale));
  const listAlternates: Alternate[] =
    locales.length < 2 ? [] : [...locales.map((locale) => ({ hreflang: locale, href: listOf(locale) })), { hreflang: 'x-default', href: listOf(site.defaultLocale) }];

  const bySlug = new Map<string, PublishedAddress[]>();
  for (const post of posts) {
    const versions = bySlug.get(post.slug);
    if (versions === undefined) bySlug.set(post.slug, [post]);
    else versions.push(post);
  }
  const postOf = (post: PublishedAddress) => absolute(postPath(post, site.defaultLocale));
  const postAlternates = (post: PublishedAddress): Alternate[] => {
    const versions = bySlug.get(post.slug) ?? [];
    if (versions.length < 2) return [];
    // The default language's address without `?locale=` picks by the reader's language.
    const chooser = absolute(postPath({ slug: post.slug, locale: site.defaultLocale }, site.defaultLocale));
    return [...versions.map((each) => ({ hreflang: each.locale, href: postOf(each) })), { hreflang: 'x-default', href: chooser }];
  };

  // Each post's last change, read once: parsing 50,000 times three times over is seconds.
  const changed = posts.map(changedAt);
  const newestOf = (locale: string) => latest(changed.filter((_, index) => posts[index]?.locale === locale));
  const urls = [
    url(absolute('/'), latest(changed), []),
    ...locales.map((locale) => url(listOf(locale), newestOf(locale), listAlternates)),
    ...posts.map((post, index) => url(postOf(post), changed[index] ?? null, postAlternates(post))),
  ];
  return xml`<?xml version="1.0" encoding="utf-8"?>
<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9" xmlns:xhtml="http://www.w3.org/1999/xhtml">${urls}
</urlset>
`.text;
}

export async function sitemapRoute(app: FastifyInstance): Promise<void> {
  // Kept in memory while the posts are unchanged (src/perf/kept-reads.ts), per the settings the
  // document shows, and until the next scheduled post comes out.
  const render = keptDocument(
    app.db,
    (site: SiteSettings) => JSON.stringify([site.defaultLocale, listLocales(site), site.contentLocales]),
    async (site: SiteSettings) => {
      // The home page and the lists come first; the posts fill the rest of the protocol's limit.
      const room = MAX_URLS - 1 - listLocales(site).length;
      const now = new Date().toISOString();
      const [posts, until] = await Promise.all([publishedAddresses(app.db.kysely, site.contentLocales, room, now), nextPublication(app.db.kysely, site.contentLocales, now)]);
      return { body: sitemap(site, app.config.appUrl, posts), until };
    },
  );
  app.get('/sitemap.xml', { config: { auth: 'public', cache: FEED_CACHE } }, async (request, reply) => {
    const site = request.site ?? app.services.settings.siteDefaults();
    const { body } = await render(site);
    return sendDocument(reply, 'application/xml; charset=utf-8', body);
  });
}
