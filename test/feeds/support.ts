// Shared set-up for the tests of /feed.xml, /sitemap.xml and /robots.txt: posts made through the
// service, and the XML read back by a real parser after a validity check.
import assert from 'node:assert/strict';
import type { FastifyInstance } from 'fastify';
import { XMLParser, XMLValidator } from 'fast-xml-parser';
import type { PostStatus } from '../../src/modules/posts/posts.repository.js';

/** The APP_URL of these tests: every address in the documents must start with it. */
export const APP_URL = 'https://blog.example.org';

// Elements that may repeat are always arrays, so a one-entry feed reads like a longer one.
const REPEATED = new Set(['entry', 'link', 'url', 'xhtml:link']);

/** Asserts the document is well-formed XML, then parses it (attributes as `@name`, every value a string). */
export function parseXml(body: string): Record<string, unknown> {
  assert.equal(XMLValidator.validate(body), true, `not well-formed XML:\n${body}`);
  const parser = new XMLParser({
    ignoreAttributes: false,
    attributeNamePrefix: '@',
    parseTagValue: false,
    parseAttributeValue: false,
    trimValues: false,
    isArray: (name) => REPEATED.has(name),
  });
  return parser.parse(body) as Record<string, unknown>;
}

/** An element's text, whether it has attributes or not. */
export function textOf(node: unknown): string {
  if (typeof node === 'string') return node;
  if (typeof node === 'object' && node !== null && '#text' in node) return String((node as { '#text': unknown })['#text']);
  if (typeof node === 'object' && node !== null) return '';
  throw new Error(`no text in ${JSON.stringify(node)}`);
}

export type PostFields = {
  title: string;
  slug?: string;
  locale?: string;
  status?: PostStatus;
  published_at?: string;
  body?: string;
  excerpt?: string;
  authorId?: number | null;
};

/** Creates a post through the service (published by default). */
export function createPost(app: FastifyInstance, fields: PostFields) {
  const { authorId = null, ...input } = fields;
  return app.services.posts.create(authorId, { status: 'published', ...input });
}

/** An ISO time `days` from now (negative: in the past). */
export const daysFromNow = (days: number) => new Date(Date.now() + days * 86_400_000).toISOString();
