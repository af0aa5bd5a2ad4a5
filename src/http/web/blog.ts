// The public blog, rendered on the server: the home page's newest posts, /blog (a locale's
// published posts, newest first, `posts_per_page` to a page) and /blog/{slug} (one post and its
// neighbours). Which posts a page shows follows the visitor's language (or an explicit
// `?locale=`), so these pages vary with Accept-Language and the cookies. Every link is made by
// modules/posts/urls.ts, as the feeds and the sitemap make theirs.
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { t } from '../../modules/i18n/translator.js';
import type { Neighbour } from '../../modules/posts/posts.neighbours.js';
import { presentPost, presentPostItem, type PostListItem } from '../../modules/posts/posts.presenter.js';
import type { PostListRow, PostWithAuthor } from '../../modules/posts/posts.repository.js';
import { nextPublication } from '../../modules/posts/published.repository.js';
import { SLUG_PATTERN } from '../../modules/posts/slug.js';
import { blogPath, feedTitle, languageName, postPath } from '../../modules/posts/urls.js';
import { keyboardScrollable, postDate } from '../../modules/posts/post-page.js';
import { latin1Html } from '../shared/latin1.js';
import { normalLocale, type SiteSettings } from '../../modules/settings/site.js';
import { notFound } from '../../modules/shared/errors.js';
import { localeOf } from '../../plugins/views.js';

/** What the layout's head-meta partial writes (every value escaped there). */
export type HeadMeta = {
  title: string;
  description: string | null;
  canonical: string;
  type: 'website' | 'article';
  siteName: string;
  ogLocale: string;
  publishedTime: string | null;
  alternates: { hreflang: string; href: string }[];
  feed: { href: string; title: string };
};

type Link = { title: string; href: string; lang: string };

const PAGE_NUMBER = /^[1-9][0-9]{0,6}$/;
// Every write keeps slugs to this form: another one names no post (and a NUL byte in it would be
// an error on PostgreSQL, not a 404).
const SLUG = new RegExp(SLUG_PATTERN);

/** Open Graph writes a locale as language_TERRITORY ("pt-BR" is "pt_BR"). */
const ogLocale = (locale: string) => locale.replace('-', '_');

/** One item of a list: what the template shows, every link from urls.ts. */
export function listItem(post: PostListRow, locale: string, site: SiteSettings) {
  const item: PostListItem = presentPostItem(post);
  return { title: item.title, href: postPath(item, site.defaultLocale), lang: item.locale, excerpt: item.excerpt, date: postDate(item.published_at, locale), author: item.author?.name ?? null };
}

export async function blogRoutes(app: FastifyInstance): Promise<void> {
  const absolute = (path: string) => `${app.config.appUrl}${path}`;
  const siteOf = (request: FastifyRequest): SiteSettings => request.site ?? app.services.settings.siteDefaults();
  const visitorLocale = (request: FastifyRequest) => localeOf(request, request.siteUserLocale ?? app.config.locale);

  /** `?locale=` when given: one the site offers (any well-formed tag when it names none), else a 404. */
  const askedLocale = (request: FastifyRequest, site: SiteSettings): string | null => {
    const asked = (request.query as Record<string, unknown>).locale;
    if (asked === undefined) return null;
    const locale = normalLocale(asked);
    if (locale === null || (site.contentLocales !== null && !site.contentLocales.includes(locale))) throw notFound();
    return locale;
  };

  /** The page of a list asked for: 1 by default; anything but a page number is a 404. */
  const pageNumber = (request: FastifyRequest): number => {
    const asked = (request.query as Record<string, unknown>).page;
    if (asked === undefined) return 1;
    if (typeof asked !== 'string' || !PAGE_NUMBER.test(asked)) throw notFound();
    return Number(asked);
  };

  /** The head of a list page (the home page, /blog): the site's own description. */
  const listHead = (site: SiteSettings, title: string, path: string, locale: string, alternates: HeadMeta['alternates']): HeadMeta => ({
    title,
    description: site.description,
    canonical: absolute(path),
    type: 'website',
    siteName: site.name,
    ogLocale: ogLocale(locale),
    publishedTime: null,
    alternates,
    feed: feedOf(site, locale),
  });

  // Titled as the feed titles itself (src/http/feeds/feed.ts): the site, and another language by name.
  const feedOf = (site: SiteSettings, locale: string) => ({
    href: `/feed.xml?locale=${encodeURIComponent(locale)}`,
    title: feedTitle(site.name, locale, site.defaultLocale),
  });

  /** The first page of each language the site offers, for hreflang (none when it offers one). */
  const listAlternates = (site: SiteSettings): HeadMeta['alternates'] => {
    const locales = site.contentLocales ?? site.interfaceLocales;
    if (locales.length < 2) return [];
    return [...locales.map((code) => ({ hreflang: code, href: absolute(blogPath(code, 1, site.defaultLocale)) })), { hreflang: 'x-default', href: absolute('/blog') }];
  };

  // The language a page picks its posts by comes from these headers.
  const varies = (reply: FastifyReply) => reply.header('vary', 'Accept-Language, Cookie');

  app.get('/', { config: { auth: 'public', cache: { public: 60 } } }, async (request, reply) => {
    const site = siteOf(request);
    const locale = visitorLocale(request);
    return varies(reply).publicPage(async () => {
      const [latest, until] = await Promise.all([app.services.posts.list({ status: 'published', locale, page: 1, perPage: site.postsPerPage }), nextPublication(app.db.kysely, [locale])]);
      const data = {
        // The owner's words (the site settings), or the defaults: the name, and the site's
        // description (as Ghost's home shows it) or, without one, a translated text.
        headline: site.headline ?? site.name,
        intro: site.intro ?? site.description ?? t(locale, 'home.lead'),
        apiCard: site.apiCard,
        posts: latest.items.map((post) => listItem(post, locale, site)),
        blogHref: blogPath(locale, 1, site.defaultLocale),
        head: listHead(site, site.name, '/', locale, []),
      };
      return { template: 'home', data, until };
    });
  });

  app.get('/blog', { config: { auth: 'public', cache: { public: 60 } } }, async (request, reply) => {
    const site = siteOf(request);
    const visitor = visitorLocale(request);
    const locale = askedLocale(request, site) ?? visitor;
    const number = pageNumber(request);
    return varies(reply).publicPage(async () => {
      const [found, until] = await Promise.all([app.services.posts.list({ status: 'published', locale, page: number, perPage: site.postsPerPage }), nextPublication(app.db.kysely, [locale])]);
      if (number > found.lastPage) throw notFound();
      const title = number > 1 ? t(visitor, 'blog.title_page', { page: number }) : t(visitor, 'blog.title');
      const pathOf = (page: number) => blogPath(locale, page, site.defaultLocale);
      const data = {
        title,
        lang: locale,
        posts: found.items.map((post) => listItem(post, visitor, site)),
        pager: {
          page: found.page,
          pages: found.lastPage,
          newer: found.page > 1 ? pathOf(found.page - 1) : null,
          older: found.page < found.lastPage ? pathOf(found.page + 1) : null,
        },
        feed: feedOf(site, locale),
        head: listHead(site, title, pathOf(number), locale, number === 1 ? listAlternates(site) : []),
      };
      return { template: 'blog/index', data, until };
    });
  });

  app.get<{ Params: { slug: string } }>('/blog/:slug', { config: { auth: 'public', cache: { public: 60 } } }, async (request, reply) => {
    const site = siteOf(request);
    const visitor = visitorLocale(request);
    const { slug } = request.params;
    const preferred = [askedLocale(request, site) ?? visitor, site.defaultLocale];
    if (!SLUG.test(slug)) throw notFound();
    return varies(reply).publicPage(async () => {
      // A post scheduled in any language may become this one's neighbour or translation.
      const [version, until] = await Promise.all([app.services.posts.findPublishedVersion(slug, preferred), nextPublication(app.db.kysely, null)]);
      if (version === undefined) throw notFound();
      return { template: 'blog/post', data: await postPage(site, visitor, version), until };
    });
  });

  /** What the post page shows of a post: itself, its neighbours, its translations and its head. */
  const postPage = async (site: SiteSettings, visitor: string, version: { post: PostWithAuthor; locales: string[] }) => {
    const { post: found, locales } = version;
    const neighbours = await app.services.posts.neighbours(found);
    const post = presentPost(found);
    const link = (other: Neighbour | null): Link | null => (other === null ? null : { title: other.title, href: postPath(other, site.defaultLocale), lang: other.locale });
    const translations = locales.map((code) => ({ locale: code, name: languageName(code), href: postPath({ slug: post.slug, locale: code }, site.defaultLocale) }));
    return {
      title: post.title,
      post: { title: post.title, lang: post.locale, html: latin1Html(keyboardScrollable(post.body_html)), date: postDate(post.published_at, visitor), author: post.author?.name ?? null },
      previous: link(neighbours.previous),
      next: link(neighbours.next),
      back: blogPath(post.locale, 1, site.defaultLocale),
      translations: translations.filter((each) => each.locale !== post.locale),
      head: {
        title: post.title,
        description: post.excerpt.trim() !== '' ? post.excerpt : site.description,
        canonical: absolute(postPath(post, site.defaultLocale)),
        type: 'article',
        siteName: site.name,
        ogLocale: ogLocale(post.locale),
        publishedTime: post.published_at === null ? null : new Date(post.published_at).toISOString(),
        // Every translation (this post among them) and, where there are some, the address that picks by language.
        alternates:
          translations.length < 2
            ? []
            : [...translations.map((each) => ({ hreflang: each.locale, href: absolute(each.href) })), { hreflang: 'x-default', href: absolute(`/blog/${encodeURIComponent(post.slug)}`) }],
        feed: feedOf(site, post.locale),
      } satisfies HeadMeta,
    };
  };
}
