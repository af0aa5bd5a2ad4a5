// Reads of the published posts for the documents that list them at once: the Atom feed (the
// newest of a locale, with their bodies) and the sitemap (every post's address, no body). A
// post is public once published and its publication time has come, as in the public list, and
// the order is the public list's too (published_at, then id, newest first).
import type { Kysely } from 'kysely';
import type { Database } from '../../db/types.js';
import type { PostWithAuthor } from './posts.repository.js';

type Q = Kysely<Database>;

/** A published post: its publication time is known. */
export type PublishedPost = PostWithAuthor & { published_at: string };

/** Where a published post lives and when it last changed, for the sitemap. */
export type PublishedAddress = { id: number; slug: string; locale: string; published_at: string; updated_at: string };

/** The posts the public may read at `now`: published, and their publication time has come. */
export function publishedAt(db: Q, now: string) {
  return db.selectFrom('posts').where('posts.status', '=', 'published').where('posts.published_at', '<=', now);
}

/** The published posts with this slug whose time has come (one per locale at most), oldest first. */
export function findPublishedBySlug(db: Q, slug: string, now: string): Promise<PostWithAuthor[]> {
  return publishedAt(db, now)
    .where('posts.slug', '=', slug)
    .leftJoin('users', 'users.id', 'posts.author_id')
    .selectAll('posts')
    .select('users.name as author_name')
    .orderBy('posts.id')
    .execute();
}

/** The `limit` newest published posts of a locale, with their bodies and authors' names. */
export function newestPublished(db: Q, locale: string, limit: number, now = new Date().toISOString()): Promise<PublishedPost[]> {
  return publishedAt(db, now)
    .where('posts.locale', '=', locale)
    .leftJoin('users', 'users.id', 'posts.author_id')
    .selectAll('posts')
    .select('users.name as author_name')
    .orderBy('posts.published_at', 'desc')
    .orderBy('posts.id', 'desc')
    .limit(limit)
    .$narrowType<{ published_at: string }>()
    .execute();
}

/**
 * The addresses of the published posts in `locales` (null: in any locale), newest first, at
 * most `limit`.
 */
export function publishedAddresses(db: Q, locales: readonly string[] | null, limit: number, now = new Date().toISOString()): Promise<PublishedAddress[]> {
  let query = publishedAt(db, now);
  if (locales !== null) query = query.where('posts.locale', 'in', [...locales]);
  return query
    .select(['posts.id', 'posts.slug', 'posts.locale', 'posts.published_at', 'posts.updated_at'])
    .orderBy('posts.published_at', 'desc')
    .orderBy('posts.id', 'desc')
    .limit(limit)
    .$narrowType<{ published_at: string }>()
    .execute();
}

/** When the next post scheduled in `locales` (null: any) comes out, in ms since the epoch; null when none is. */
export async function nextPublication(db: Q, locales: readonly string[] | null, now = new Date().toISOString()): Promise<number | null> {
  let query = db.selectFrom('posts').where('status', '=', 'published').where('published_at', '>', now);
  if (locales !== null) query = query.where('locale', 'in', [...locales]);
  const row = await query.select((eb) => eb.fn.min('published_at').as('at')).executeTakeFirst();
  return row?.at === null || row?.at === undefined ? null : Date.parse(row.at);
}
