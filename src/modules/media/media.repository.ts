// Queries on media. Lists and single rows never read `data`: only the route serving a file does.
import type { Kysely } from 'kysely';
import type { Database, MediaTable } from '../../db/types.js';
import type { Selectable, Insertable } from 'kysely';

type Q = Kysely<Database>;

export type MediaRow = Omit<Selectable<MediaTable>, 'data'>;

const COLUMNS = ['id', 'hash', 'type', 'name', 'size', 'width', 'height', 'uploaded_by', 'created_at'] as const;

export function insertMedia(db: Q, row: Insertable<MediaTable>): Promise<MediaRow> {
  return db.insertInto('media').values(row).returning(COLUMNS).executeTakeFirstOrThrow();
}

export function findMediaById(db: Q, id: number): Promise<MediaRow | undefined> {
  return db.selectFrom('media').select(COLUMNS).where('id', '=', id).executeTakeFirst();
}

export function findMediaByHash(db: Q, hash: string): Promise<MediaRow | undefined> {
  return db.selectFrom('media').select(COLUMNS).where('hash', '=', hash).executeTakeFirst();
}

/** The stored bytes of one image and their type. */
export function findMediaFile(db: Q, hash: string): Promise<{ type: MediaRow['type']; data: Buffer } | undefined> {
  return db.selectFrom('media').select(['type', 'data']).where('hash', '=', hash).executeTakeFirst();
}

export async function countMedia(db: Q): Promise<number> {
  const row = await db.selectFrom('media').select((eb) => eb.fn.countAll<string | number>().as('n')).executeTakeFirstOrThrow();
  return Number(row.n);
}

/** Newest first. */
export function listMedia(db: Q, limit: number, offset: number): Promise<MediaRow[]> {
  return db.selectFrom('media').select(COLUMNS).orderBy('created_at', 'desc').orderBy('id', 'desc').limit(limit).offset(offset).execute();
}

export async function deleteMedia(db: Q, id: number): Promise<void> {
  await db.deleteFrom('media').where('id', '=', id).execute();
}

/**
 * The posts whose markdown links to the image at `path` (`/media/<hash>.<ext>`), in any status
 * and language. The path is hex, a dot and letters: nothing LIKE would read as a wildcard.
 */
export function postsLinking(db: Q, path: string): Promise<{ id: number; title: string; locale: string }[]> {
  return db.selectFrom('posts').select(['id', 'title', 'locale']).where('body', 'like', `%${path}%`).orderBy('id').execute();
}
