// Who may be named as a post's author. The accounts that may write posts are the ones the API
// and the panel let write them: the administrators. An author is one of them when the post is
// given one; a post keeps the author it has (one demoted since, or none once the account was
// deleted) until someone names another, so saving an old post never fails on its author.
import type { Kysely } from 'kysely';
import type { Database, User } from '../../db/types.js';
import type { Message } from '../i18n/translator.js';
import { findUserById } from '../users/users.repository.js';
import { canAccessPanel } from '../users/users.service.js';

type Q = Kysely<Database>;

/** An account the editor offers as an author. */
export type AuthorChoice = { id: number; name: string; email: string };

export const AUTHOR_INVALID: Message = { key: 'editor.errors.author' };

/** Whether this account may be named as a post's author. */
export function mayAuthor(user: Pick<User, 'is_admin'>): boolean {
  return canAccessPanel(user);
}

/** The accounts that may be named as authors, by name. */
export async function authorChoices(db: Q): Promise<AuthorChoice[]> {
  // The SQL form of mayAuthor narrows the read; mayAuthor itself has the last word.
  const rows = await db.selectFrom('users').select(['id', 'name', 'email', 'is_admin']).where('is_admin', '=', 1).orderBy('name').orderBy('id').execute();
  return rows.filter(mayAuthor).map(({ id, name, email }) => ({ id, name, email }));
}

/**
 * Whether `authorId` may be the author of a post whose author is now `current` (undefined for a
 * new post): the author it already has, or an account that may write posts.
 */
export async function authorAllowed(db: Q, authorId: number | null, current: number | null | undefined): Promise<boolean> {
  if (current !== undefined && authorId === current) return true;
  if (authorId === null) return false;
  const user = await findUserById(db, authorId);
  return user !== undefined && mayAuthor(user);
}
