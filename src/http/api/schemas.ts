// Schemas shared by the API routes. They validate requests, shape responses (fields not listed
// are never serialized) and generate the OpenAPI document.
import { Type } from '@sinclair/typebox';

/**
 * A nullable timestamp in a response, as `type: ["string", "null"]` (valid JSON Schema 2020-12 and
 * OpenAPI 3.1). An anyOf union would make the serializer run a validator on every response to
 * pick the branch; a type list is serialized directly.
 */
export const NullableTimestamp = (description?: string) =>
  Type.Unsafe<string | null>({ type: ['string', 'null'], format: 'date-time', ...(description === undefined ? {} : { description }) });

export const UserSchema = Type.Object(
  {
    id: Type.Integer(),
    name: Type.String(),
    email: Type.String({ format: 'email' }),
    email_verified_at: NullableTimestamp(),
    created_at: Type.String({ format: 'date-time' }),
    updated_at: Type.String({ format: 'date-time' }),
  },
  { $id: 'User' },
);

// Examples shown by the document: one for each success answer and request body. Each is checked
// against its schema (test/api/openapi-lint.test.ts lints them, openapi.test.ts validates them).
export const EXAMPLE_USER = {
  id: 1,
  name: 'Ada Lovelace',
  email: 'ada@example.com',
  email_verified_at: '2026-01-05T09:30:00.000Z',
  created_at: '2026-01-05T09:12:44.000Z',
  updated_at: '2026-03-18T16:02:10.000Z',
};

export const EXAMPLE_POST_ITEM = {
  id: 12,
  title: 'Hello, world',
  slug: 'hello-world',
  excerpt: 'The first post of this blog.',
  locale: 'en',
  status: 'published',
  published_at: '2026-03-18T16:00:00.000Z',
  author: { id: 1, name: 'Ada Lovelace' },
};

export const EXAMPLE_POST = {
  ...EXAMPLE_POST_ITEM,
  body: 'The first post of this blog, in **Markdown**.',
  body_html: '<p>The first post of this blog, in <strong>Markdown</strong>.</p>\n',
};

export const EXAMPLE_POST_PAGE = {
  data: [EXAMPLE_POST_ITEM],
  meta: { current_page: 1, last_page: 1, per_page: 15, total: 1 },
  links: {
    first: 'https://blog.example.org/api/posts?locale=en&per_page=15&page=1',
    next: null,
    prev: null,
    last: 'https://blog.example.org/api/posts?locale=en&per_page=15&page=1',
  },
};

/** The user as an answer's whole body. */
export const UserRef = Type.Ref(UserSchema.$id!, { examples: [EXAMPLE_USER] });

const NullableText = (description: string) => Type.Unsafe<string | null>({ type: ['string', 'null'], description });

/** GET /api/settings: the site's own settings, always present and typed, then the public custom ones as stored. */
export const SiteSettingsSchema = Type.Object(
  {
    site_name: Type.String({ description: 'The site name (APP_NAME until one is set)' }),
    site_description: NullableText('The site description; null for none'),
    home_headline: NullableText("The home page's headline; null shows the site name"),
    home_intro: NullableText("The home page's introduction; null shows the default text, translated"),
    home_api_card: Type.Boolean({ description: 'Whether the home page shows the card about the API' }),
    default_locale: Type.String({ description: 'The language of a visitor who states none' }),
    locales: Type.Array(Type.String(), { description: 'The languages the site offers (BCP 47 tags), the default among them' }),
    posts_per_page: Type.Integer({ minimum: 1, maximum: 100, description: 'Posts on a page of the blog' }),
  },
  { additionalProperties: Type.Unknown({ description: 'A public custom setting: its JSON value as stored' }) },
);

export const EXAMPLE_SETTINGS = {
  site_name: 'Tessera',
  site_description: 'Accounts, tokens and posts.',
  home_headline: null,
  home_intro: null,
  home_api_card: true,
  default_locale: 'en',
  locales: ['en', 'fr'],
  posts_per_page: 15,
};
