// Posts in the panel: the table (search, status and locale filters, sort, pages), the editor
// (slug made from the title when left empty, the author among those who may write posts, the
// publication time in UTC, markdown with a preview shaped and styled as the public post:
// rendered live by public/post-editor.js as the owner types, and by the server's Preview button
// without JavaScript), the post's translations with "Add translation", publish / unpublish, and
// delete after a confirmation step. Writes go through PostService, the same as the API's, so a
// post published here is in GET /api/posts on the next request.
import { Type } from '@sinclair/typebox';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Post } from '../../db/types.js';
import { POST_SORTS } from '../../modules/admin/admin.repository.js';
import { parseListParams, pick } from '../../modules/admin/listing.js';
import { LOCALES, isLocale, t, type Locale } from '../../modules/i18n/translator.js';
import type { AuthorChoice } from '../../modules/posts/authors.js';
import { BROWSER_RENDERING, renderMarkdown } from '../../modules/posts/markdown.js';
import { panelTimeValue, parsePanelTime } from '../../modules/posts/panel-time.js';
import { POST_DATE_STYLE, keyboardScrollable, postDate } from '../../modules/posts/post-page.js';
import { latin1Html } from '../shared/latin1.js';
import type { PostForm } from '../../modules/posts/posts.service.js';
import { SLUG_PATTERN, slugify } from '../../modules/posts/slug.js';
import { languageName, postPath } from '../../modules/posts/urls.js';
import { notFound, type FieldErrors } from '../../modules/shared/errors.js';
import { safeBackPath } from '../shared/back-path.js';
import { done, field, localeFor, oldInput, refusal, schemaErrors } from '../shared/forms.js';
import { acting, adminPage, idParam, tableLinks } from './support.js';

export const POST_STATUSES = ['draft', 'published', 'archived'] as const;
type Status = (typeof POST_STATUSES)[number];

const PostBody = Type.Object({
  title: Type.String({ minLength: 1, maxLength: 255 }),
  // Empty: made from the title.
  slug: Type.Optional(Type.String({ maxLength: 255, pattern: `^$|${SLUG_PATTERN}` })),
  excerpt: Type.Optional(Type.String({ maxLength: 1000 })),
  body: Type.Optional(Type.String({ maxLength: 200_000 })),
  // Which languages: the domain's rule (PostService), the one the API's writes follow.
  locale: Type.String({ minLength: 1, maxLength: 35 }),
  status: Type.Union(POST_STATUSES.map((status) => Type.Literal(status))),
  published_at: Type.Optional(Type.String({ maxLength: 32 })),
  // Empty: the author the post has (a new post's: the administrator writing it).
  author_id: Type.Optional(Type.String({ maxLength: 12 })),
  _action: Type.Optional(Type.Union([Type.Literal('save'), Type.Literal('preview')])),
});

type FormValues = { title: string; slug: string; excerpt: string; body: string; locale: string; status: string; published_at: string; author_id: string };

const valuesOf = (post: Post): FormValues => ({
  title: post.title,
  slug: post.slug,
  excerpt: post.excerpt,
  body: post.body,
  locale: post.locale,
  status: post.status,
  published_at: panelTimeValue(post.published_at),
  author_id: post.author_id === null ? '' : String(post.author_id),
});

// What the live preview needs to render as the server does: the markdown options and the allowlist.
const RENDERING_JSON = JSON.stringify(BROWSER_RENDERING);
// ...and the Intl options of the post's date, as the site shows it.
const DATE_STYLE_JSON = JSON.stringify(POST_DATE_STYLE);

function submitted(body: unknown): FormValues {
  const old = oldInput(body);
  return {
    title: old.title ?? '',
    slug: old.slug ?? '',
    excerpt: old.excerpt ?? '',
    body: old.body ?? '',
    locale: old.locale ?? 'en',
    status: old.status ?? 'draft',
    published_at: old.published_at ?? '',
    author_id: old.author_id ?? '',
  };
}

/** The editor's fields as typed, for PostService's rules. */
const postForm = (request: FastifyRequest): PostForm => ({
  title: field(request, 'title'),
  slug: field(request, 'slug'),
  excerpt: field(request, 'excerpt'),
  body: field(request, 'body'),
  locale: field(request, 'locale'),
  // Any other value is a schema error, and then nothing is saved.
  status: field(request, 'status') as Status,
  published_at: field(request, 'published_at'),
  author_id: field(request, 'author_id'),
});

/**
 * The language field's options: those the site offers, and the post's own when the site no
 * longer offers it, so that saving keeps the post in its language rather than moving it.
 */
function localeOptions(locale: Locale, offered: readonly string[], post: Post | null): [string, string][] {
  const codes = post === null || offered.includes(post.locale) ? offered : [...offered, post.locale];
  return codes.map((code) => [code, isLocale(code) ? t(locale, `admin.locale.${code}`) : languageName(code, locale).replace(/^./, (first) => first.toLocaleUpperCase(locale))]);
}

/** The author field's options: who may write posts, and the post's own author when not among them. */
function authorOptions(locale: Locale, choices: AuthorChoice[], post: Post | null, authorName: string | null): { value: string; label: string; name: string }[] {
  // Two accounts of the same name are told apart by their addresses.
  const named = (choice: AuthorChoice) => (choices.filter((other) => other.name === choice.name).length > 1 ? `${choice.name} (${choice.email})` : choice.name);
  const options = choices.map((choice) => ({ value: String(choice.id), label: named(choice), name: choice.name }));
  if (post === null || options.some((option) => option.value === String(post.author_id))) return options;
  const kept =
    post.author_id === null || authorName === null
      ? { value: '', label: t(locale, 'editor.author_none'), name: '' }
      : { value: String(post.author_id), label: t(locale, 'editor.author_former', { name: authorName }), name: authorName };
  return [kept, ...options];
}

export const postRoutes: FastifyPluginAsyncTypebox = async (app) => {
  const findOr404 = async (request: FastifyRequest): Promise<Post> => {
    const post = await app.services.admin.findPost(idParam(request));
    if (post === undefined) throw notFound();
    return post;
  };

  /** The post's translations, one entry per other language: the post in it, or none yet. */
  const translationsOf = async (post: Post) => {
    const others = await app.services.posts.translationsOf(post);
    return LOCALES.filter((code) => code !== post.locale).map((code) => {
      const other = others.find((each) => each.locale === code);
      return { locale: code, post: other === undefined ? null : { id: other.id, title: other.title, status: other.status } };
    });
  };

  const form = async (
    request: FastifyRequest,
    reply: FastifyReply,
    locale: Locale,
    post: Post | null,
    values: FormValues,
    extra: { errors?: FieldErrors; preview?: boolean; translating?: Post } = {},
    status = 200,
  ) => {
    const [choices, translations, site, stored] = await Promise.all([
      app.services.posts.authorChoices(),
      post === null ? null : translationsOf(post),
      request.site ?? app.services.settings.site(),
      post === null ? undefined : app.services.posts.findAny(post.slug, post.locale),
    ]);
    const authors = authorOptions(locale, choices, post, stored?.author_name ?? null);
    // A published post whose time has come has a public address; one dated later is scheduled.
    const live = post !== null && post.status === 'published' && post.published_at !== null;
    const due = live && Date.parse(post.published_at ?? '') <= Date.now();
    const when = parsePanelTime(values.published_at);
    return adminPage(request, reply, 'admin/posts/form', 'posts', {
      title: post === null ? t(locale, 'admin.posts.new') : t(locale, 'admin.posts.edit', { title: post.title }),
      post,
      values,
      errors: extra.errors ?? {},
      // The server's preview (the Preview button, without JavaScript); the script renders the same shape live.
      showPreview: extra.preview === true,
      preview: {
        html: latin1Html(keyboardScrollable(renderMarkdown(values.body))),
        date: postDate(typeof when === 'string' ? when : null, locale),
        author: authors.find((option) => option.value === values.author_id)?.name || null,
      },
      rendering: RENDERING_JSON,
      dateStyle: DATE_STYLE_JSON,
      slugSuggestion: slugify(values.title),
      statuses: POST_STATUSES,
      localeOptions: localeOptions(locale, site.contentLocales ?? LOCALES, post),
      authors,
      translations,
      translating: extra.translating === undefined ? null : { id: extra.translating.id, title: extra.translating.title, locale: extra.translating.locale },
      viewUrl: due && post !== null ? postPath(post, site.defaultLocale) : null,
      scheduledAt: live && !due ? post.published_at : null,
    }, status);
  };

  app.get('/posts', { config: { auth: 'admin' } }, async (request, reply) => {
    const params = parseListParams(request.query, POST_SORTS, { sort: 'updated_at', dir: 'desc' });
    const query = request.query as Record<string, unknown>;
    const filters = { status: pick(query.status, POST_STATUSES), locale: pick(query.locale, LOCALES) };
    const result = await app.services.admin.posts({ ...params, ...filters }, params.page, params.perPage);
    return adminPage(request, reply, 'admin/posts/index', 'posts', {
      title: t(localeFor(app, request), 'admin.nav.posts'),
      params,
      filters,
      result,
      statuses: POST_STATUSES,
      postLocales: LOCALES,
      links: tableLinks('/admin/posts', params, filters),
      back: request.url,
    });
  });

  // ?translate={id}&locale={code}: a new post prefilled as a translation of that post (its slug,
  // the other language, its title, excerpt and body to translate in place), a draft by the
  // administrator writing it. A language that already has the translation opens it instead.
  app.get('/posts/new', { config: { auth: 'admin' } }, async (request, reply) => {
    const locale = localeFor(app, request);
    const writer = String(acting(request).actor.id);
    const query = request.query as Record<string, unknown>;
    const blank = { title: '', slug: '', excerpt: '', body: '', locale, status: 'draft', published_at: '', author_id: writer };
    if (query.translate === undefined) return form(request, reply, locale, null, blank);
    const id = typeof query.translate === 'string' && /^[1-9][0-9]{0,14}$/.test(query.translate) ? Number(query.translate) : 0;
    const original = id > 0 ? await app.services.admin.findPost(id) : undefined;
    if (original === undefined) throw notFound();
    const existing = await app.services.posts.translationsOf(original);
    const target = pick(query.locale, LOCALES) ?? LOCALES.find((code) => code !== original.locale && !existing.some((other) => other.locale === code));
    const already = existing.find((other) => other.locale === target);
    if (already !== undefined) return reply.redirect(`/admin/posts/${already.id}/edit`, 303);
    if (target === undefined || target === original.locale) return reply.redirect(`/admin/posts/${original.id}/edit`, 303);
    const values = { ...blank, title: original.title, slug: original.slug, excerpt: original.excerpt, body: original.body, locale: target };
    return form(request, reply, locale, null, values, { translating: original });
  });

  app.post('/posts', { config: { auth: 'admin' }, schema: { body: PostBody }, attachValidation: true }, async (request, reply) => {
    const locale = localeFor(app, request);
    const values = submitted(request.body);
    if ((request.body as { _action?: string })._action === 'preview') {
      return form(request, reply, locale, null, values, { preview: true, errors: schemaErrors(request, locale) });
    }
    try {
      const post = await app.services.admin.savePost(acting(request), null, postForm(request), schemaErrors(request, locale));
      return done(request, reply, `/admin/posts/${post.id}/edit`, t(locale, 'admin.posts.created', { title: post.title }));
    } catch (error) {
      return form(request, reply, locale, null, values, { errors: refusal(error, locale).errors }, 422);
    }
  });

  app.get('/posts/:id/edit', { config: { auth: 'admin' } }, async (request, reply) => {
    const post = await findOr404(request);
    return form(request, reply, localeFor(app, request), post, valuesOf(post));
  });

  app.post('/posts/:id', { config: { auth: 'admin' }, schema: { body: PostBody }, attachValidation: true }, async (request, reply) => {
    const locale = localeFor(app, request);
    const post = await findOr404(request);
    const values = submitted(request.body);
    if ((request.body as { _action?: string })._action === 'preview') {
      return form(request, reply, locale, post, values, { preview: true, errors: schemaErrors(request, locale) });
    }
    try {
      const updated = await app.services.admin.savePost(acting(request), post, postForm(request), schemaErrors(request, locale));
      return done(request, reply, `/admin/posts/${post.id}/edit`, t(locale, 'admin.posts.updated', { title: updated.title }));
    } catch (error) {
      return form(request, reply, locale, post, values, { errors: refusal(error, locale).errors }, 422);
    }
  });

  // Back to the page the button was on (the table with its filters, or the editor).
  const back = (request: FastifyRequest, fallback: string): string => {
    const path = safeBackPath(request.headers.referer, app.config.appUrl);
    return path.startsWith('/admin/') ? path : fallback;
  };

  // Publish keeps the date of a post published before (a first publication is dated now);
  // unpublish sends it back to draft.
  for (const [path, status] of [['publish', 'published'], ['unpublish', 'draft']] as const) {
    app.post(`/posts/:id/${path}`, { config: { auth: 'admin' } }, async (request, reply) => {
      const locale = localeFor(app, request);
      const post = await findOr404(request);
      const updated = await app.services.admin.setPostStatus(acting(request), post, status);
      return done(request, reply, back(request, '/admin/posts'), t(locale, `admin.posts.${status === 'draft' ? 'unpublished' : 'published'}`, { title: updated.title }));
    });
  }

  app.get('/posts/:id/delete', { config: { auth: 'admin' } }, async (request, reply) => {
    const locale = localeFor(app, request);
    const post = await findOr404(request);
    return adminPage(request, reply, 'admin/confirm', 'posts', {
      title: t(locale, 'admin.posts.delete_title'),
      message: t(locale, 'admin.posts.delete_confirm', { title: post.title }),
      action: `/admin/posts/${post.id}/delete`,
      button: t(locale, 'admin.posts.delete'),
      cancel: `/admin/posts/${post.id}/edit`,
    });
  });

  app.post('/posts/:id/delete', { config: { auth: 'admin' } }, async (request, reply) => {
    const locale = localeFor(app, request);
    const post = await findOr404(request);
    await app.services.admin.deletePost(acting(request), post);
    return done(request, reply, '/admin/posts', t(locale, 'admin.posts.deleted', { title: post.title }));
  });
};
