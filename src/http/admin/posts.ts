// Posts in the panel: the table (search, status and locale filters, sort, pages), the editor
// (slug made from the title when left empty, markdown with a server-rendered preview, so it
// works without JavaScript), publish / unpublish, and delete after a confirmation step.
// Writes go through PostService, the same as the API's, so a post published here is in
// GET /api/posts on the next request.
import { Type } from '@sinclair/typebox';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Post } from '../../db/types.js';
import { POST_SORTS } from '../../modules/admin/admin.repository.js';
import { parseListParams, pick } from '../../modules/admin/listing.js';
import { LOCALES, t, type Locale } from '../../modules/i18n/translator.js';
import { renderMarkdown } from '../../modules/posts/markdown.js';
import type { PostForm } from '../../modules/posts/posts.service.js';
import { SLUG_PATTERN, slugify } from '../../modules/posts/slug.js';
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
  locale: Type.Union(LOCALES.map((code) => Type.Literal(code))),
  status: Type.Union(POST_STATUSES.map((status) => Type.Literal(status))),
  published_at: Type.Optional(Type.String({ maxLength: 32 })),
  _action: Type.Optional(Type.Union([Type.Literal('save'), Type.Literal('preview')])),
});

type FormValues = { title: string; slug: string; excerpt: string; body: string; locale: string; status: string; published_at: string };

/** An ISO time as a datetime-local value, in UTC like every time in the panel. */
const toLocalInput = (iso: string | null): string => (iso === null ? '' : new Date(iso).toISOString().slice(0, 16));

const valuesOf = (post: Post): FormValues => ({
  title: post.title,
  slug: post.slug,
  excerpt: post.excerpt,
  body: post.body,
  locale: post.locale,
  status: post.status,
  published_at: toLocalInput(post.published_at),
});

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
});

export const postRoutes: FastifyPluginAsyncTypebox = async (app) => {
  const findOr404 = async (request: FastifyRequest): Promise<Post> => {
    const post = await app.services.admin.findPost(idParam(request));
    if (post === undefined) throw notFound();
    return post;
  };

  const form = (
    request: FastifyRequest,
    reply: FastifyReply,
    locale: Locale,
    post: Post | null,
    values: FormValues,
    extra: { errors?: FieldErrors; preview?: string | null } = {},
    status = 200,
  ) =>
    adminPage(request, reply, 'admin/posts/form', 'posts', {
      title: post === null ? t(locale, 'admin.posts.new') : t(locale, 'admin.posts.edit', { title: post.title }),
      post,
      values,
      errors: extra.errors ?? {},
      preview: extra.preview ?? null,
      slugSuggestion: slugify(values.title),
      statuses: POST_STATUSES,
      postLocales: LOCALES,
    }, status);

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

  app.get('/posts/new', { config: { auth: 'admin' } }, async (request, reply) => {
    const locale = localeFor(app, request);
    return form(request, reply, locale, null, { title: '', slug: '', excerpt: '', body: '', locale, status: 'draft', published_at: '' });
  });

  app.post('/posts', { config: { auth: 'admin' }, schema: { body: PostBody }, attachValidation: true }, async (request, reply) => {
    const locale = localeFor(app, request);
    const values = submitted(request.body);
    if ((request.body as { _action?: string })._action === 'preview') {
      return form(request, reply, locale, null, values, { preview: renderMarkdown(values.body), errors: schemaErrors(request, locale) });
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
      return form(request, reply, locale, post, values, { preview: renderMarkdown(values.body), errors: schemaErrors(request, locale) });
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
