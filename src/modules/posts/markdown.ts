// Markdown to safe HTML: marked renders, sanitize-html removes every script, event handler and
// javascript: URL, whatever the author wrote.
import { marked } from 'marked';
import sanitizeHtml from 'sanitize-html';

const ALLOWED = {
  allowedTags: [...sanitizeHtml.defaults.allowedTags, 'img', 'h1', 'h2', 'del'],
  allowedAttributes: { a: ['href', 'title'], img: ['src', 'alt', 'title'], code: ['class'] },
  allowedSchemes: ['http', 'https', 'mailto'],
} satisfies sanitizeHtml.IOptions;

export function renderMarkdown(markdown: string): string {
  const html = marked.parse(markdown, { async: false, gfm: true });
  return sanitizeHtml(html, ALLOWED);
}
