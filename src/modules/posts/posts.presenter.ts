// Post shapes for responses: list items, and the single post with its body rendered.
import { renderMarkdown } from './markdown.js';
import type { PostListRow, PostWithAuthor } from './posts.repository.js';

export type PostListItem = {
  id: number;
  title: string;
  slug: string;
  excerpt: string;
  locale: string;
  status: string;
  published_at: string | null;
  author: { id: number; name: string } | null;
};

export type PostDetail = PostListItem & { body: string; body_html: string };

export function presentPostItem(post: PostListRow): PostListItem {
  return {
    id: post.id,
    title: post.title,
    slug: post.slug,
    excerpt: post.excerpt,
    locale: post.locale,
    status: post.status,
    published_at: post.published_at,
    author: post.author_id === null || post.author_name === null ? null : { id: post.author_id, name: post.author_name },
  };
}

export function presentPost(post: PostWithAuthor): PostDetail {
  return { ...presentPostItem(post), body: post.body, body_html: renderMarkdown(post.body) };
}
