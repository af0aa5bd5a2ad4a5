// Markdown to safe HTML: markdown-it renders (CommonMark plus GitHub's tables, strikethrough and
// bare-URL links), sanitize-html removes every script, event handler and javascript: URL,
// whatever the author wrote.
//
// markdown-it rather than marked: marked 16 takes time quadratic in the length of some bodies
// (100,000 repetitions of "*a" or "`a", a 200 KB post, took 13 s and 21 s, blocking the event
// loop for every reader of that post) and overflows the stack on deep nesting ("> " repeated);
// markdown-it stays near-linear on the same inputs (≤ 0.4 s for any 200 KB body tried) and caps
// nesting (maxNesting).
import MarkdownIt from 'markdown-it';
import sanitizeHtml from 'sanitize-html';

const MARKDOWN_OPTIONS = { html: true, linkify: true } as const;
const markdown = new MarkdownIt(MARKDOWN_OPTIONS);

const ALLOWED = {
  allowedTags: [...sanitizeHtml.defaults.allowedTags, 'img', 'h1', 'h2', 'del', 's'],
  allowedAttributes: { a: ['href', 'title'], img: ['src', 'alt', 'title'], code: ['class'] },
  allowedSchemes: ['http', 'https', 'mailto'],
} satisfies sanitizeHtml.IOptions;

/**
 * The rules above, for the editor's live preview (public/post-editor.js): the browser renders
 * with the same markdown-it and these options, and DOMPurify keeps only these tags, attributes
 * and schemes, so the preview shows what the server will publish. Written once, here.
 */
export const BROWSER_RENDERING = Object.freeze({
  markdown: MARKDOWN_OPTIONS,
  tags: ALLOWED.allowedTags,
  attributes: ALLOWED.allowedAttributes,
  schemes: ALLOWED.allowedSchemes,
});

// A rendered body is a pure function of the markdown, so the result is kept by the markdown
// itself: nothing can go stale, an edited post is simply another key. Least recently used entries
// go first, within a count and a size (UTF-16 units of markdown + HTML, ~2 bytes each); a body
// larger than an eighth of the size is rendered every time rather than evicting everything.
const MAX_ENTRIES = 256;
const MAX_CHARS = 8 * 1024 * 1024;
const cache = new Map<string, string>();
let cachedChars = 0;
let hits = 0;
let misses = 0;

export function renderMarkdown(source: string): string {
  const cached = cache.get(source);
  if (cached !== undefined) {
    hits += 1;
    cache.delete(source);
    cache.set(source, cached);
    return cached;
  }
  misses += 1;
  const html = sanitizeHtml(markdown.render(source), ALLOWED);
  remember(source, html);
  return html;
}

function remember(source: string, html: string): void {
  const size = source.length + html.length;
  if (size > MAX_CHARS / 8) return;
  cache.set(source, html);
  cachedChars += size;
  for (const [key, value] of cache) {
    if (cache.size <= MAX_ENTRIES && cachedChars <= MAX_CHARS) break;
    cache.delete(key);
    cachedChars -= key.length + value.length;
  }
}

/** What the render cache holds and how it was used (for tests). */
export function markdownCacheStats(): { entries: number; chars: number; hits: number; misses: number; maxEntries: number; maxChars: number } {
  return { entries: cache.size, chars: cachedChars, hits, misses, maxEntries: MAX_ENTRIES, maxChars: MAX_CHARS };
}
