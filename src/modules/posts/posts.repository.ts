// Queries on posts. The public list and its count both run on posts_listing_index.
import type { Kysely } from 'kysely';
import { statement, type Arg, type Db } from '../../db/connect.js';
import type { Database, NewPost, Post } from '../../db/types.js';

type Q = Kysely<Database>;

export type PostStatus = Post['status'];
export type PostWithAuthor = Post & { author_name: string | null };

export type ListFilter = { status: PostStatus; locale: string; now: string };

function filtered(db: Q, filter: ListFilter) {
  let query = db.selectFrom('posts').where('posts.status', '=', filter.status).where('posts.locale', '=', filter.locale);
  // A published post is public only once its publication time has come.
  if (filter.status === 'published') query = query.where('posts.published_at', '<=', filter.now);
  return query;
}

/**
 * How many posts the filter matches: the trigger-kept count of the (status, locale), less — for
 * published posts — those scheduled for later (a short range of the listing index).
 */
export async function countPosts(db: Q, filter: ListFilter): Promise<number> {
  const total = Number((await keptQuery(db, filter).executeTakeFirst())?.n ?? 0);
  if (filter.status !== 'published' || total <= 0) return Math.max(0, total);
  const scheduled = await scheduledQuery(db, filter).executeTakeFirstOrThrow();
  return Math.max(0, total - Number(scheduled.n));
}

export type PostListRow = Omit<PostWithAuthor, 'body' | 'created_at' | 'updated_at'>;

/** One page, newest first (published_at, then id), without the bodies. */
export function listPosts(db: Q, filter: ListFilter, limit: number, offset: number): Promise<PostListRow[]> {
  return listQuery(db, filter, limit, offset).execute();
}

function listQuery(db: Q, filter: ListFilter, limit: number, offset: number) {
  return filtered(db, filter)
    .leftJoin('users', 'users.id', 'posts.author_id')
    .select(['posts.id', 'posts.author_id', 'posts.title', 'posts.slug', 'posts.excerpt', 'posts.locale', 'posts.status', 'posts.published_at'])
    .select('users.name as author_name')
    .orderBy('posts.published_at', 'desc')
    .orderBy('posts.id', 'desc')
    .limit(limit)
    .offset(offset);
}

function scheduledQuery(db: Q, filter: ListFilter) {
  return db
    .selectFrom('posts')
    .select((eb) => eb.fn.countAll<number | string>().as('n'))
    .where('status', '=', 'published')
    .where('locale', '=', filter.locale)
    .where('published_at', '>', filter.now);
}

function nextScheduledQuery(db: Q, filter: ListFilter) {
  return db
    .selectFrom('posts')
    .select((eb) => eb.fn.min('published_at').as('at'))
    .where('status', '=', 'published')
    .where('locale', '=', filter.locale)
    .where('published_at', '>', filter.now);
}

function keptQuery(db: Q, filter: Pick<ListFilter, 'status' | 'locale'>) {
  return db.selectFrom('post_counts').select('n').where('status', '=', filter.status).where('locale', '=', filter.locale);
}

/** One page of a list, with the total for the envelope. */
export type Page<T> = { items: T[]; total: number; page: number; perPage: number; lastPage: number };

export function page<T>(filter: { page: number; perPage: number }, items: T[], total: number): Page<T> {
  return { items, total, page: filter.page, perPage: filter.perPage, lastPage: Math.max(1, Math.ceil(total / filter.perPage)) };
}

/** Which page of the public list: the published posts of a locale. */
export type PublicPageFilter = { locale: string; page: number; perPage: number };

/**
 * A page of the public list, and when the locale's next scheduled post comes out (ms since the
 * epoch, or null): the page is what it is until then, or until a write. Frozen: it may answer
 * many requests.
 */
export type PublicPage = Readonly<Page<PostListRow>> & { readonly nextPublication: number | null };

// The public list's four reads, built once per database (statement()): it is the busiest read of
// the API, and building and compiling the queries cost more than running them.
type Published = { locale: string; now: string };
const published = (arg: Arg<Published>): ListFilter => ({ status: 'published', locale: arg('locale'), now: arg('now') });
const publishedPage = statement('published_posts_page', (kysely, arg: Arg<Published & { limit: number; offset: number }>) =>
  listQuery(kysely, published(arg), arg('limit'), arg('offset')),
);
const publishedKept = statement('published_posts_kept', (kysely, arg: Arg<{ locale: string }>) => keptQuery(kysely, { status: 'published', locale: arg('locale') }));
const publishedScheduled = statement('published_posts_scheduled', (kysely, arg: Arg<Published>) => scheduledQuery(kysely, published(arg)));
const publishedNext = statement('published_posts_next', (kysely, arg: Arg<Published>) => nextScheduledQuery(kysely, published(arg)));

/** Reads pages of the public list of `db`. */
export function publicPages(db: Db): (filter: PublicPageFilter) => Promise<PublicPage> {
  const count = async (at: Published): Promise<number> => {
    const total = Number((await publishedKept.first(db, { locale: at.locale }))?.n ?? 0);
    if (total <= 0) return 0;
    return Math.max(0, total - Number((await publishedScheduled.first(db, at))?.n ?? 0));
  };
  return async (filter) => {
    const at = { locale: filter.locale, now: new Date().toISOString() };
    const offset = (filter.page - 1) * filter.perPage;
    const [total, items, upcoming] = await Promise.all([count(at), publishedPage.all(db, { ...at, limit: filter.perPage, offset }), publishedNext.first(db, at)]);
    for (const item of items) Object.freeze(item);
    const next = upcoming?.at ?? null;
    return Object.freeze({ ...page(filter, Object.freeze(items) as PostListRow[], total), nextPublication: next === null ? null : Date.parse(next) });
  };
}

// Whole post rows with their author's name.
function withAuthor(db: Q) {
  return db.selectFrom('posts').leftJoin('users', 'users.id', 'posts.author_id').selectAll('posts').select('users.name as author_name');
}

/** The posts with this slug in any status, oldest first: one per locale at most, only `locale`'s when given. */
export function findPostsBySlug(db: Q, slug: string, locale?: string): Promise<PostWithAuthor[]> {
  let query = withAuthor(db).where('posts.slug', '=', slug);
  if (locale !== undefined) query = query.where('posts.locale', '=', locale);
  return query.orderBy('posts.id').execute();
}

export function findPostWithAuthor(db: Q, id: number): Promise<PostWithAuthor | undefined> {
  return withAuthor(db).where('posts.id', '=', id).executeTakeFirst();
}

/**
 * Whether another post of `locale` has this slug. A slug is unique per locale (the index
 * posts_slug_locale_unique): a translation shares its original's slug.
 */
export async function slugTaken(db: Q, slug: string, locale: string, exceptId?: number): Promise<boolean> {
  let query = db.selectFrom('posts').select('id').where('slug', '=', slug).where('locale', '=', locale);
  if (exceptId !== undefined) query = query.where('id', '!=', exceptId);
  return (await query.executeTakeFirst()) !== undefined;
}

export function insertPost(db: Q, post: NewPost): Promise<Post> {
  return db.insertInto('posts').values(post).returningAll().executeTakeFirstOrThrow();
}

export function updatePost(db: Q, id: number, changes: Partial<NewPost>): Promise<Post | undefined> {
  return db.updateTable('posts').set(changes).where('id', '=', id).returningAll().executeTakeFirst();
}

export async function deletePost(db: Q, id: number): Promise<void> {
  await db.deleteFrom('posts').where('id', '=', id).execute();
}
