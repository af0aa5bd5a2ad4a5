// The posts either side of a published post in its locale's public list (the blog's
// "previous / next" links): the same order as the list, published_at then id, so that walking
// the links visits every listed post once. Both reads run on posts_listing_index.
import type { Kysely } from 'kysely';
import type { Database, Post } from '../../db/types.js';
import { publishedAt } from './published.repository.js';

/** What a link to a neighbouring post needs. */
export type Neighbour = Pick<Post, 'id' | 'title' | 'slug' | 'locale' | 'published_at'>;

export type Neighbours = { previous: Neighbour | null; next: Neighbour | null };

/**
 * The published post just older (`previous`) and just newer (`next`) than `post` in its locale,
 * among those whose time has come at `now` (a post scheduled for later is no one's neighbour).
 */
export async function publishedNeighbours(db: Kysely<Database>, post: Pick<Post, 'id' | 'locale' | 'published_at'>, now: string): Promise<Neighbours> {
  const at = post.published_at;
  if (at === null) return { previous: null, next: null };
  const listed = publishedAt(db, now).select(['id', 'title', 'slug', 'locale', 'published_at']).where('locale', '=', post.locale);
  const [previous, next] = await Promise.all([
    listed
      .where((eb) => eb.or([eb('published_at', '<', at), eb.and([eb('published_at', '=', at), eb('id', '<', post.id)])]))
      .orderBy('published_at', 'desc')
      .orderBy('id', 'desc')
      .limit(1)
      .executeTakeFirst(),
    listed
      .where((eb) => eb.or([eb('published_at', '>', at), eb.and([eb('published_at', '=', at), eb('id', '>', post.id)])]))
      .orderBy('published_at', 'asc')
      .orderBy('id', 'asc')
      .limit(1)
      .executeTakeFirst(),
  ]);
  return { previous: previous ?? null, next: next ?? null };
}
