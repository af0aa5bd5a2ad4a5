// GET /feed.xml: the Atom 1.0 feed (RFC 4287) of one language's newest published posts;
// `?locale=fr` for another language than the site's default. A language the site does not offer
// (the `locales` setting; any well-formed tag while it names none) is a 404, the site's usual
// page, as /blog?locale= answers: a feed reader acts on the status alone, and a person who
// follows a broken feed link gets the page every other missing address gets, with its way back.
import type { FastifyInstance } from 'fastify';
import { newestPublished, nextPublication, type PublishedPost } from '../../modules/posts/published.repository.js';
import { presentPost } from '../../modules/posts/posts.presenter.js';
import { blogPath, feedTitle, postPath } from '../../modules/posts/urls.js';
import { normalLocale, type SiteSettings } from '../../modules/settings/site.js';
import { notFound } from '../../modules/shared/errors.js';
import { keptWhileUnchanged } from '../../perf/read-cache.js';
import { weakEtag } from '../shared/etag.js';
import { changedAt, instant, latest, xml } from './xml.js';
import { FEED_CACHE, sendDocument } from './send.js';

/** How many posts the feed carries, newest first. */
export const FEED_SIZE = 20;

// The `updated` of a feed with no entry yet: a fixed time, so that an empty feed keeps its
// ETag (a clock reading would make every request a new document).
const NEVER = '1970-01-01T00:00:00.000Z';

/** The language a feed request names, if the site offers it; the site's default when it names none. */
function feedLocale(asked: unknown, site: SiteSettings): string {
  if (asked === undefined) return site.defaultLocale;
  const locale = normalLocale(asked);
  if (locale === null || (site.contentLocales !== null && !site.contentLocales.includes(locale))) throw notFound();
  return locale;
}

/**
 * An entry's id: a tag URI (RFC 4151) from the site's host, the post's creation day and its
 * id. It never changes when the post's slug, its title or the site's default language (hence
 * its URL) does, so a feed reader never shows an edited post as a new one.
 */
function entryId(host: string, post: PublishedPost): string {
  return `tag:${host},${instant(post.created_at).slice(0, 10)}:posts/${post.id}`;
}

/** The feed document. */
export function atomFeed(site: SiteSettings, locale: string, appUrl: string, posts: readonly PublishedPost[]): string {
  const absolute = (path: string) => `${appUrl}${path}`;
  const host = new URL(appUrl).hostname;
  // The explicit-locale address is the feed's id: it stays the same when the default changes.
  const self = absolute(`/feed.xml?locale=${encodeURIComponent(locale)}`);
  const title = feedTitle(site.name, locale, site.defaultLocale);
  const updated = latest(posts.map(changedAt)) ?? NEVER;
  const entries = posts.map((post) => {
    const shown = presentPost(post);
    return xml`
  <entry>
    <id>${entryId(host, post)}</id>
    <title type="text">${shown.title}</title>
    <link rel="alternate" type="text/html" href="${absolute(postPath(shown, site.defaultLocale))}"/>
    <published>${instant(post.published_at)}</published>
    <updated>${changedAt(post)}</updated>${shown.author === null ? null : xml`
    <author><name>${shown.author.name}</name></author>`}${shown.excerpt.trim() === '' ? null : xml`
    <summary type="text">${shown.excerpt}</summary>`}
    <content type="html">${shown.body_html}</content>
  </entry>`;
  });
  // The feed's own author covers entries whose author is gone (Atom requires one for each).
  return xml`<?xml version="1.0" encoding="utf-8"?>
<feed xmlns="http://www.w3.org/2005/Atom" xml:lang="${locale}">
  <id>${self}</id>
  <title type="text">${title}</title>${site.description === null ? null : xml`
  <subtitle type="text">${site.description}</subtitle>`}
  <updated>${updated}</updated>
  <link rel="self" type="application/atom+xml" href="${self}"/>
  <link rel="alternate" type="text/html" hreflang="${locale}" href="${absolute(blogPath(locale, 1, site.defaultLocale))}"/>
  <author><name>${site.name}</name></author>
  <generator>Tessera</generator>${entries}
</feed>
`.text;
}

export async function feedRoute(app: FastifyInstance): Promise<void> {
  type Kept = { body: Buffer; etag: string; until: number | null };
  type Ask = { key: string; site: SiteSettings; locale: string };
  // Kept in memory while the posts and their authors are unchanged (src/perf/read-cache.ts: the
  // next request after a write through any instance renders it again), per language and the
  // settings it shows, and until the language's next scheduled post comes out.
  const render = keptWhileUnchanged<Ask, string, Kept>(app.db.changes, { maxEntries: 32, key: (ask) => ask.key, until: (kept) => kept.until }, async ({ site, locale }) => {
    const [posts, until] = await Promise.all([newestPublished(app.db.kysely, locale, FEED_SIZE), nextPublication(app.db.kysely, [locale])]);
    const body = Buffer.from(atomFeed(site, locale, app.config.appUrl, posts));
    return { body, etag: weakEtag(body), until };
  });
  app.get('/feed.xml', { config: { auth: 'public', cache: FEED_CACHE } }, async (request, reply) => {
    const site = request.site ?? app.services.settings.siteDefaults();
    const locale = feedLocale((request.query as Record<string, unknown>).locale, site);
    const kept = await render({ key: JSON.stringify([locale, site.name, site.description, site.defaultLocale]), site, locale });
    return sendDocument(reply.header('etag', kept.etag), 'application/atom+xml; charset=utf-8', kept.body);
  });
}
