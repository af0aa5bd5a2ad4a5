// Blog posts: the public listing and the editors' writes (API and admin panel share these).
// A slug is unique per locale, not across the site: a translation shares its original's slug
// (migration 2026_11_26_000001), so reads and writes by slug say which locale they mean.
import type { Db } from '../../db/connect.js';
import { writeTransaction } from '../../db/connect.js';
import type { Post } from '../../db/types.js';
import type { Message } from '../i18n/translator.js';
import { ValidationError, invalid, type FieldMessages } from '../shared/errors.js';
import { panelTimeValue, parsePanelTime } from './panel-time.js';
import { AUTHOR_INVALID, authorAllowed, authorChoices, type AuthorChoice } from './authors.js';
import { isUniqueViolation } from '../../db/errors.js';
import type { MaybePromise } from '../../lib/maybe-promise.js';
import { slugify } from './slug.js';
import { publishedNeighbours, type Neighbours } from './posts.neighbours.js';
import { findPublishedBySlug } from './published.repository.js';
import { LOCALE_NOT_OFFERED, offersLocale, postLocale, type OfferedLocales } from './locales.js';
import {
  countPosts,
  deletePost,
  findPostWithAuthor,
  findPostsBySlug,
  insertPost,
  listPosts,
  slugTaken,
  updatePost,
  page,
  publicPages,
  type Page,
  type PostListRow,
  type PublicPage,
  type PublicPageFilter,
  type PostStatus,
  type PostWithAuthor,
} from './posts.repository.js';

/** A taken slug, as a message key: each face answers in its reader's language. */
const TAKEN_SLUG: Message = { key: 'validation.unique', attribute: 'slug' };
const SLUG_REQUIRED: Message = { key: 'admin.posts.errors.slug_required' };
/** A write by slug alone where the slug names posts in several languages (an API text, translated by its words). */
const SLUG_IN_SEVERAL_LOCALES = 'The slug is used in several languages: give the locale parameter to choose the post.';

/**
 * The panel editor's fields as typed; `published_at` is a datetime-local value, in UTC;
 * `author_id` an account's id, or empty for the post's author as it is (a new post's: the writer).
 */
export type PostForm = { title: string; slug: string; excerpt: string; body: string; locale: string; status: PostStatus; published_at: string; author_id?: string };

export type PostInput = {
  title?: string;
  slug?: string;
  excerpt?: string;
  body?: string;
  locale?: string;
  status?: PostStatus;
  published_at?: string | null;
  /** An account that may write posts (authors.ts); a post keeps the author it has. */
  author_id?: number | null;
};

export type { Page } from './posts.repository.js';

export type ListFilterInput = { status: PostStatus; locale: string; page: number; perPage: number };

export class PostService {
  /**
   * `offeredLocales`: the languages the site offers now (the settings'), which a post's language
   * must be one of. `findPublicPage`: how a page of the public list is read; the app passes the
   * reader kept in memory while the database is unchanged (src/perf/kept-reads.ts), which may
   * answer at once.
   */
  constructor(
    private readonly db: Db,
    private readonly offeredLocales: OfferedLocales,
    private readonly findPublicPage: (filter: PublicPageFilter) => MaybePromise<PublicPage> = publicPages(db),
  ) {}

  /** One page of posts of a status and locale, newest first, with the total for the envelope. */
  list(filter: ListFilterInput): MaybePromise<Page<PostListRow>> {
    if (filter.status === 'published') return this.findPublicPage(filter);
    return this.listAny(filter);
  }

  private async listAny(filter: ListFilterInput): Promise<Page<PostListRow>> {
    const where = { status: filter.status, locale: filter.locale, now: new Date().toISOString() };
    const offset = (filter.page - 1) * filter.perPage;
    const [total, items] = await Promise.all([countPosts(this.db.kysely, where), listPosts(this.db.kysely, where, filter.perPage, offset)]);
    return page(filter, items, total);
  }

  /**
   * A post that the public may read (published, and its publication time has come) with this
   * slug: the one in the first of `preferred` locales that has one, else the oldest.
   */
  async findPublished(slug: string, preferred: readonly string[] = []): Promise<PostWithAuthor | undefined> {
    return (await this.findPublishedVersion(slug, preferred))?.post;
  }

  /**
   * The same post, with the locales in which its slug can be read now (its translations and
   * itself), from one read: the blog's post page shows both.
   */
  async findPublishedVersion(slug: string, preferred: readonly string[] = []): Promise<{ post: PostWithAuthor; locales: string[] } | undefined> {
    const posts = await findPublishedBySlug(this.db.kysely, slug, new Date().toISOString());
    const post = preferred.map((locale) => posts.find((candidate) => candidate.locale === locale)).find((found) => found !== undefined) ?? posts[0];
    return post === undefined ? undefined : { post, locales: posts.map((each) => each.locale) };
  }

  /** The published posts just older and just newer than `post` in its locale (the blog's previous/next). */
  neighbours(post: Pick<Post, 'id' | 'locale' | 'published_at'>): Promise<Neighbours> {
    return publishedNeighbours(this.db.kysely, post, new Date().toISOString());
  }

  /** The published post of exactly this locale with this slug, if the public may read it. */
  async findPublishedIn(slug: string, locale: string): Promise<PostWithAuthor | undefined> {
    const post = await this.findPublished(slug, [locale]);
    return post?.locale === locale ? post : undefined;
  }

  /** A post in any status with this slug: `locale`'s when given, else the oldest of the slug's posts. */
  async findAny(slug: string, locale?: string): Promise<PostWithAuthor | undefined> {
    return (await findPostsBySlug(this.db.kysely, slug, locale))[0];
  }

  /**
   * The post a write by slug addresses: `locale`'s when given, else the slug's only post. A slug
   * is unique per locale, so without a locale it may name a post and its translations: that is
   * a 422 on `locale`, never a guess at which one to change or delete.
   */
  async findToChange(slug: string, locale?: string): Promise<PostWithAuthor | undefined> {
    const posts = await findPostsBySlug(this.db.kysely, slug, locale);
    if (posts.length > 1) throw new ValidationError({ locale: [SLUG_IN_SEVERAL_LOCALES] });
    return posts[0];
  }

  /**
   * Creates a post; the slug comes from the title when absent and must be unique in its locale
   * (422). Its author is `input.author_id` when given (one who may write posts, else 422), else
   * `authorId`, the writer.
   */
  async create(authorId: number | null, input: PostInput & { title: string }): Promise<PostWithAuthor> {
    const slug = input.slug ?? slugify(input.title);
    if (slug === '') throw invalid({ slug: [SLUG_REQUIRED] });
    await this.checkAuthor(input.author_id, undefined);
    const now = new Date().toISOString();
    const status = input.status ?? 'draft';
    const locale = postLocale(input.locale ?? 'en');
    await this.checkLocale(locale);
    const post = await this.guardSlug(() =>
      writeTransaction(this.db, async (trx) => {
        if (await slugTaken(trx, slug, locale)) throw invalid({ slug: [TAKEN_SLUG] });
        return insertPost(trx, {
          author_id: input.author_id === undefined ? authorId : input.author_id,
          title: input.title,
          slug,
          excerpt: input.excerpt ?? '',
          body: input.body ?? '',
          locale,
          status,
          // Publishing without a date publishes now.
          published_at: input.published_at ?? (status === 'published' ? now : null),
          created_at: now,
          updated_at: now,
        });
      }),
    );
    return this.reload(post);
  }

  /** Updates the fields given; a new slug or locale must leave the slug unique in its locale, a new author may write posts. */
  async update(post: Post, input: PostInput): Promise<PostWithAuthor> {
    await this.checkAuthor(input.author_id, post.author_id);
    const changes: Partial<Post> = { updated_at: new Date().toISOString() };
    for (const key of ['title', 'slug', 'excerpt', 'body', 'status', 'published_at', 'author_id'] as const) {
      if (input[key] !== undefined) Object.assign(changes, { [key]: input[key] });
    }
    // Only a move to another language is checked: a post written in a language the site has
    // stopped offering stays editable in it (its editor sends that language back unchanged).
    const locale = input.locale === undefined ? post.locale : postLocale(input.locale);
    if (locale !== post.locale) {
      await this.checkLocale(locale);
      changes.locale = locale;
    }
    if (input.status === 'published' && input.published_at === undefined && post.published_at === null) {
      changes.published_at = changes.updated_at;
    }
    const updated = await this.guardSlug(() =>
      writeTransaction(this.db, async (trx) => {
        // Moving a post to another language is a change of (slug, locale) too.
        const moved = changes.slug !== undefined || changes.locale !== undefined;
        if (moved && (await slugTaken(trx, changes.slug ?? post.slug, changes.locale ?? post.locale, post.id))) {
          throw invalid({ slug: [TAKEN_SLUG] });
        }
        return updatePost(trx, post.id, changes);
      }),
    );
    if (updated === undefined) throw new ValidationError({ slug: ['The post no longer exists.'] });
    return this.reload(updated);
  }

  /**
   * Saves the panel's editor form, as a new post when `post` is null. An empty slug is made
   * from the title; an empty date is "now" when publishing, kept when already published, else
   * none. `earlier` holds the form's schema errors, so that every error shows at once.
   */
  async saveForm(post: Post | null, authorId: number | null, form: PostForm, earlier: FieldMessages = {}): Promise<PostWithAuthor> {
    const errors: FieldMessages = { ...earlier };
    // The time shown in the field, sent back unchanged, keeps the stored time to the millisecond.
    const unchanged = post !== null && form.published_at !== '' && form.published_at === panelTimeValue(post.published_at);
    const when = unchanged ? post.published_at : parsePanelTime(form.published_at);
    if (when === undefined && errors.published_at === undefined) errors.published_at = [{ key: 'validation.date', attribute: 'published_at' }];
    const author = formAuthor(form.author_id);
    if (author === null || (author !== undefined && !(await authorAllowed(this.db.kysely, author, post?.author_id)))) errors.author_id = [AUTHOR_INVALID];
    if (Object.keys(errors).length > 0) throw invalid(errors);
    const slug = form.slug !== '' ? form.slug : slugify(form.title);
    if (slug === '') throw invalid({ slug: [SLUG_REQUIRED] });
    const publishedAt = when === null && form.status === 'published' ? (post?.published_at ?? undefined) : when;
    const input = {
      title: form.title,
      slug,
      excerpt: form.excerpt,
      body: form.body,
      locale: form.locale,
      status: form.status,
      published_at: publishedAt,
      ...(author === undefined ? {} : { author_id: author }),
    };
    return post === null ? this.create(authorId, input) : this.update(post, input);
  }

  /** The accounts a post's author may be chosen among. */
  authorChoices(): Promise<AuthorChoice[]> {
    return authorChoices(this.db.kysely);
  }

  /** The other posts with this post's slug (its translations, one per locale), oldest first. */
  async translationsOf(post: Pick<Post, 'id' | 'slug'>): Promise<PostWithAuthor[]> {
    return (await findPostsBySlug(this.db.kysely, post.slug)).filter((other) => other.id !== post.id);
  }

  async remove(post: Post): Promise<void> {
    await deletePost(this.db.kysely, post.id);
  }

  // A post in a language the site does not offer could never be listed nor fed: 422 on locale,
  // as the list's filter answers.
  private async checkLocale(locale: string): Promise<void> {
    if (!offersLocale(await this.offeredLocales(), locale)) throw invalid({ locale: [LOCALE_NOT_OFFERED] });
  }

  // A named author must be the post's own or one who may write posts.
  private async checkAuthor(authorId: number | null | undefined, current: number | null | undefined): Promise<void> {
    if (authorId !== undefined && !(await authorAllowed(this.db.kysely, authorId, current))) throw invalid({ author_id: [AUTHOR_INVALID] });
  }

  private async reload(post: Post): Promise<PostWithAuthor> {
    return (await findPostWithAuthor(this.db.kysely, post.id)) ?? { ...post, author_name: null };
  }

  // Two writers racing for one slug in one locale: the unique index decides, and the loser gets the same 422.
  private async guardSlug<T>(fn: () => Promise<T>): Promise<T> {
    try {
      return await fn();
    } catch (error) {
      if (isUniqueViolation(error)) throw invalid({ slug: [TAKEN_SLUG] });
      throw error;
    }
  }
}

/** The editor's author field: undefined when empty (the author as it is), null when not an id. */
function formAuthor(value: string | undefined): number | null | undefined {
  if (value === undefined || value === '') return undefined;
  return /^[1-9][0-9]{0,9}$/.test(value) ? Number(value) : null;
}
