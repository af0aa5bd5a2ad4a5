// Shared set-up for the API tests: rows written straight into the test database (posts, tokens
// in Laravel's format) and the exact bodies the API promises.
import { crc32 } from 'node:zlib';
import { createHash, randomBytes } from 'node:crypto';
import type { Db } from '../../src/db/connect.js';
import type { NewPost, Post, TokenRow } from '../../src/db/types.js';

export const UNAUTHENTICATED = '{"message":"Unauthenticated.","errors":{}}';
export const UNAUTHORIZED = '{"message":"This action is unauthorized.","errors":{}}';
export const NOT_FOUND = '{"message":"Not Found.","errors":{}}';

export const sha256 = (text: string): string => createHash('sha256').update(text).digest('hex');

/** A secret in Sanctum 4's layout, built here independently of the app's generator. */
export function sanctumSecret(prefix = ''): string {
  const alphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';
  const entropy = [...randomBytes(40)].map((byte) => alphabet[byte % 62]).join('');
  return `${prefix}${entropy}${crc32(entropy).toString(16).padStart(8, '0')}`;
}

/** Splits a plaintext token `<id>|<secret>`. */
export function splitToken(plaintext: string): { id: number; secret: string } {
  const [id, secret] = plaintext.split('|');
  return { id: Number(id), secret: secret ?? '' };
}

export function tokenRow(db: Db, id: number): Promise<TokenRow | undefined> {
  return db.kysely.selectFrom('personal_access_tokens').selectAll().where('id', '=', id).executeTakeFirst();
}

export async function setTokenTimes(db: Db, id: number, times: { created_at?: string; expires_at?: string | null; last_used_at?: string | null }): Promise<void> {
  await db.kysely.updateTable('personal_access_tokens').set(times).where('id', '=', id).execute();
}

/** Inserts a token row as a Laravel app would have written it; returns the plaintext. */
export async function insertLaravelToken(db: Db, userId: number, secret = sanctumSecret()): Promise<string> {
  const now = new Date().toISOString();
  const row = await db.kysely
    .insertInto('personal_access_tokens')
    .values({ user_id: userId, name: 'laravel-device', token: sha256(secret), abilities: '["*"]', last_used_at: null, expires_at: null, created_at: now, updated_at: now })
    .returning('id')
    .executeTakeFirstOrThrow();
  return `${row.id}|${secret}`;
}

let postCounter = 0;

/** Inserts a post row directly (published an hour ago by default). */
export async function insertPost(db: Db, fields: Partial<NewPost> = {}): Promise<Post> {
  postCounter += 1;
  const now = new Date().toISOString();
  return db.kysely
    .insertInto('posts')
    .values({
      author_id: null,
      title: `Post ${postCounter}`,
      slug: `post-${postCounter}-${randomBytes(3).toString('hex')}`,
      excerpt: `Excerpt ${postCounter}`,
      body: `Body of post ${postCounter}`,
      locale: 'en',
      status: 'published',
      published_at: new Date(Date.now() - 3_600_000).toISOString(),
      created_at: now,
      updated_at: now,
      ...fields,
    })
    .returningAll()
    .executeTakeFirstOrThrow();
}

export const minutesAgo = (minutes: number): string => new Date(Date.now() - minutes * 60_000).toISOString();
