// GET /api/posts, GET /api/posts/{slug}, and the editors' writes (posts:write + admin).
import { Type, type Static } from '@sinclair/typebox';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { FastifyReply } from 'fastify';
import type { Post } from '../../db/types.js';
import { presentPost, presentPostItem } from '../../modules/posts/posts.presenter.js';
import type { Page } from '../../modules/posts/posts.service.js';
import type { PostListRow } from '../../modules/posts/posts.repository.js';
import { SLUG_PATTERN } from '../../modules/posts/slug.js';
import { LOCALE_NOT_OFFERED, offersLocale } from '../../modules/posts/locales.js';
import { normalLocale, type SiteSettings } from '../../modules/settings/site.js';
import { can } from '../../modules/tokens/abilities.js';
import { invalid, forbidden, notFound } from '../../modules/shared/errors.js';
import { canAccessPanel } from '../../modules/users/users.service.js';
import { keptBodies } from '../../perf/kept-bodies.js';
import type { ApiCaller } from '../../plugins/types.js';
import { weakEtag } from '../shared/etag.js';
import { apiActing } from './acting.js';
import { pageLinks } from './pagination.js';
import { NoContent, errorResponses } from '../shared/schemas.js';
import { EXAMPLE_POST, EXAMPLE_POST_PAGE, NullableTimestamp } from './schemas.js';

const LOCALE_PATTERN = '^[a-z]{2,3}(-[A-Za-z0-9]{2,8})*$';
// A locale asked for in a query string, in any case (normalLocale reads FR as fr).
const QUERY_LOCALE_PATTERN = '^[A-Za-z]{2,3}(-[A-Za-z0-9]{2,8})*$';
const Status = (description?: string) =>
  Type.Union([Type.Literal('draft'), Type.Literal('published'), Type.Literal('archived')], description === undefined ? {} : { description });
// In answers, an enum rather than a union of literals: the serializer writes it as the plain
// string it is (a union would make it check each branch), and a generated client gets the same
// string union.
const StatusEnum = Type.Unsafe<Post['status']>({ type: 'string', enum: ['draft', 'published', 'archived'] });
const STATUS_FILTER =
  'Which posts: `published` (the default) for anyone; `draft` and `archived` only for an administrator, with a token holding `posts:read` or the SPA session: otherwise 422 on `status`.';

// The filter's locale is one the site offers (the `locales` setting), in any case: FR is fr.
const ListQuery = Type.Object({
  locale: Type.String({ pattern: QUERY_LOCALE_PATTERN, maxLength: 35, default: 'en' }),
  status: Type.Optional(Status(STATUS_FILTER)),
  page: Type.Integer({
    minimum: 1,
    maximum: 10_000_000,
    default: 1,
    description:
      'A page past the last is not an error (as Laravel\'s paginator): 200 with an empty `data`, `meta.current_page` the page asked for, `links.next` null, `links.prev` the page before it, and `links.first`/`links.last` pages 1 and `meta.last_page` (1 when there are no posts).',
  }),
  per_page: Type.Integer({ minimum: 1, maximum: 100, default: 15 }),
});

// Nullable shapes in responses are type lists, not anyOf unions: the serializer would otherwise
// validate every item against each branch (see NullableTimestamp).
const Author = Type.Unsafe<{ id: number; name: string } | null>({
  type: ['object', 'null'],
  properties: { id: { type: 'integer' }, name: { type: 'string' } },
  required: ['id', 'name'],
});
const NullableUrl = Type.Unsafe<string | null>({ type: ['string', 'null'], format: 'uri' });
const PostItem = Type.Object(
  {
    id: Type.Integer(),
    title: Type.String(),
    slug: Type.String(),
    excerpt: Type.String(),
    locale: Type.String(),
    status: StatusEnum,
    published_at: NullableTimestamp(),
    author: Author,
  },
  { $id: 'PostItem' },
);
const PostDetail = Type.Object(
  { ...PostItem.properties, body: Type.String({ description: 'Markdown.' }), body_html: Type.String({ description: 'Rendered and sanitized.' }) },
  { $id: 'Post' },
);

const PostPage = Type.Object(
  {
    data: Type.Array(Type.Ref('PostItem')),
    meta: Type.Object({ current_page: Type.Integer(), last_page: Type.Integer(), per_page: Type.Integer(), total: Type.Integer() }),
    links: Type.Object({
      first: Type.String({ format: 'uri' }),
      next: NullableUrl,
      prev: NullableUrl,
      last: Type.String({ format: 'uri' }),
    }),
  },
  { examples: [EXAMPLE_POST_PAGE] },
);
// One post as an answer's body.
const PostAnswer = Type.Object({ data: Type.Ref('Post') }, { examples: [{ data: EXAMPLE_POST }] });

const SlugParams = Type.Object({ slug: Type.String({ minLength: 1, maxLength: 255 }) });

// A slug is unique per locale, not across the site: a translation shares its original's slug.
// Which of a slug's posts a request means is this optional `locale`.
const readLocale = Type.Object({
  locale: Type.Optional(
    Type.String({
      pattern: QUERY_LOCALE_PATTERN,
      maxLength: 35,
      description: "The post's language, in any case (FR is fr). Without it: the post in the site's default language, else the slug's oldest.",
    }),
  ),
});
const writeLocale = Type.Object({
  locale: Type.Optional(
    Type.String({
      pattern: QUERY_LOCALE_PATTERN,
      maxLength: 35,
      description: "The post's language, in any case (FR is fr). Required when the slug is used in several languages.",
    }),
  ),
});
const queryLocale = (locale: string | undefined): string | undefined => (locale === undefined ? undefined : (normalLocale(locale) ?? locale));

const PostFields = {
  slug: Type.Optional(Type.String({ pattern: SLUG_PATTERN, minLength: 1, maxLength: 255 })),
  excerpt: Type.Optional(Type.String({ maxLength: 1000 })),
  body: Type.Optional(Type.String({ maxLength: 200_000 })),
  locale: Type.Optional(Type.String({ pattern: LOCALE_PATTERN, maxLength: 35 })),
  status: Type.Optional(Status()),
  published_at: Type.Optional(Type.Union([Type.String({ format: 'date-time' }), Type.Null()])),
  author_id: Type.Optional(
    Type.Integer({
      minimum: 1,
      maximum: 2_147_483_647,
      description: "The author: an account that may write posts (an administrator); a post keeps the author it has unless given another. Without it a new post's author is the token's owner.",
    }),
  ),
};
const CreateBody = Type.Object(
  { title: Type.String({ minLength: 1, maxLength: 255 }), ...PostFields },
  { examples: [{ title: 'Hello, world', body: 'The first post of this blog, in **Markdown**.', locale: 'en', status: 'published' }] },
);
const UpdateBody = Type.Object(
  { title: Type.Optional(Type.String({ minLength: 1, maxLength: 255 })), ...PostFields },
  { examples: [{ title: 'Hello again, world', status: 'archived' }] },
);

/** Editors are admins holding a token with posts:write. */
/** What the write routes' documentation says of the audit log. */
const AUDITED = 'Leaves the audit line the same change made in the panel leaves, saying it came through the API and with which token (its id)';

function assertEditor(caller: ApiCaller | null): ApiCaller {
  if (caller === null || !canAccessPanel(caller.user)) throw forbidden();
  return caller;
}

function normalizeDate(value: string | null | undefined): string | null | undefined {
  return typeof value === 'string' ? new Date(value).toISOString() : value;
}

// Each page's serialized answer and ETag, per query string (the links repeat it).
const listBodies = keptBodies<{ body: string; etag: string }>();

// A body serialized by the route's own serializer (its 200 schema): a string with its type set
// is sent as it is (Fastify serialises objects only).
function sendSerialized(reply: FastifyReply, known: { body: string; etag: string }): void {
  void reply.type('application/json; charset=utf-8').header('etag', known.etag).send(known.body);
}

// A failure of an answer sent later: the error handler makes the envelope.
function sendFailure(reply: FastifyReply, error: unknown): void {
  void reply.send(error instanceof Error ? error : new Error(String(error)));
}

export const postRoutes: FastifyPluginAsyncTypebox = async (app) => {
  app.addSchema(PostItem);
  app.addSchema(PostDetail);

  app.get(
    '/posts',
    {
      config: { auth: 'optional-token', cache: { public: 0 } },
      schema: {
        summary: 'List published posts, newest first',
        description: 'status other than `published` needs an admin token with posts:read.',
        tags: ['posts'],
        querystring: ListQuery,
        response: { 200: PostPage, ...errorResponses(401, 422) },
      },
    },
    (request, reply) => {
      const query = request.query as Static<typeof ListQuery>;
      const status = query.status ?? 'published';
      if (status !== 'published') {
        const caller = request.caller;
        const allowed = caller !== null && can(caller.abilities, 'posts:read') && canAccessPanel(caller.user);
        if (!allowed) throw invalid({ status: [{ key: 'validation.in', attribute: 'status' }] });
      }
      const queryString = request.url.slice(request.url.indexOf('?') + 1 || request.url.length);
      const send = (page: Page<PostListRow>) => {
        const known = listBodies(page, queryString, () => {
          // fast-json-stringify, the route's serializer, returns a string.
          const body = String(
            reply.serialize({
              data: page.items.map(presentPostItem),
              meta: { current_page: page.page, last_page: page.lastPage, per_page: page.perPage, total: page.total },
              // The locale in its usual case (FR is fr), as the posts hold it.
              links: pageLinks(`${app.config.appUrl}/api/posts`, { ...(request.query as Record<string, unknown>), locale }, page.page, page.lastPage),
            }),
          );
          return { body, etag: weakEtag(body) };
        });
        sendSerialized(reply, known);
      };
      const locale = normalLocale(query.locale) ?? query.locale;
      const offering = (site: SiteSettings) => {
        if (!offersLocale(site.contentLocales, locale)) throw invalid({ locale: [LOCALE_NOT_OFFERED] });
      };
      // Only a locale asked for is checked: the default (en) answers even where it is not offered.
      const site = new URLSearchParams(queryString).has('locale') ? app.services.settings.site() : null;
      if (site !== null && !(site instanceof Promise)) offering(site);
      const page = app.services.posts.list({ status, locale, page: query.page, perPage: query.per_page });
      // Answered at once when the page is known at once: no promise, no microtask turn. (A
      // handler that is not async may send its answer later; a failure goes to the error handler.)
      if (site instanceof Promise) {
        void Promise.all([site, page]).then(([known, found]) => {
          offering(known);
          send(found);
        }).catch((error: unknown) => sendFailure(reply, error));
      } else if (page instanceof Promise) void page.then(send, (error: unknown) => sendFailure(reply, error));
      else send(page);
    },
  );

  app.get(
    '/posts/:slug',
    {
      config: { auth: 'public', cache: { public: 0 } },
      schema: {
        summary: 'One published post by slug',
        description:
          "A slug is unique per language: a translation shares its original's slug. With `locale`, that language's post (404 if it has none); without it, the post in the site's default language (`default_locale`) if there is one, else the oldest.",
        tags: ['posts'],
        params: SlugParams,
        querystring: readLocale,
        response: { 200: PostAnswer, ...errorResponses(404, 422) },
      },
    },
    async (request) => {
      const { slug } = request.params;
      const locale = queryLocale(request.query.locale);
      // No locale: the site's default language first, so /api/posts/{slug} keeps answering with
      // the original when a translation shares its slug.
      const post =
        locale === undefined
          ? await app.services.posts.findPublished(slug, [(await app.services.settings.site()).defaultLocale])
          : await app.services.posts.findPublishedIn(slug, locale);
      if (post === undefined) throw notFound();
      return { data: presentPost(post) };
    },
  );

  app.post(
    '/posts',
    {
      config: { auth: { ability: 'posts:write' } },
      schema: {
        summary: 'Create a post (admin token with posts:write)',
        description: `${AUDITED} (post.created).`,
        tags: ['posts'],
        body: CreateBody,
        response: { 201: PostAnswer, ...errorResponses(401, 403, 422) },
      },
    },
    async (request, reply) => {
      const caller = assertEditor(request.caller);
      const body = request.body;
      // Through the panel's own call, so the write leaves the panel's audit line (saying it came through the API).
      const post = await app.services.admin.createPost(apiActing(request, caller), { ...body, published_at: normalizeDate(body.published_at) });
      return reply.code(201).send({ data: presentPost(post) });
    },
  );

  // A slug without a locale that names posts in several languages is a 422 on `locale`.
  const findForEdit = async (slug: string, locale: string | undefined): Promise<Post> => {
    const post = await app.services.posts.findToChange(slug, queryLocale(locale));
    if (post === undefined) throw notFound();
    return post;
  };

  app.put(
    '/posts/:slug',
    {
      config: { auth: { ability: 'posts:write' } },
      schema: {
        summary: 'Update a post (admin token with posts:write)',
        description: `Addressed by slug and, when the slug is used in several languages, \`locale\` (422 on \`locale\` without it). ${AUDITED} (post.updated with the names of the changed fields; none changed, no line).`,
        tags: ['posts'],
        params: SlugParams,
        querystring: writeLocale,
        body: UpdateBody,
        response: { 200: PostAnswer, ...errorResponses(401, 403, 404, 422) },
      },
    },
    async (request) => {
      const caller = assertEditor(request.caller);
      const post = await findForEdit(request.params.slug, request.query.locale);
      const body = request.body;
      return { data: presentPost(await app.services.admin.updatePost(apiActing(request, caller), post, { ...body, published_at: normalizeDate(body.published_at) })) };
    },
  );

  app.delete(
    '/posts/:slug',
    {
      config: { auth: { ability: 'posts:write' } },
      schema: {
        summary: 'Delete a post (admin token with posts:write)',
        description: `Addressed by slug and, when the slug is used in several languages, \`locale\` (422 on \`locale\` without it). ${AUDITED} (post.deleted).`,
        tags: ['posts'],
        params: SlugParams,
        querystring: writeLocale,
        response: { 204: NoContent, ...errorResponses(401, 403, 404, 422) },
      },
    },
    async (request, reply) => {
      const caller = assertEditor(request.caller);
      await app.services.admin.deletePost(apiActing(request, caller), await findForEdit(request.params.slug, request.query.locale));
      return reply.code(204).send(null);
    },
  );
};
