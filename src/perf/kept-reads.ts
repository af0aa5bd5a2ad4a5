// The reads kept in memory (read-cache.ts), each a repository function wrapped: the token lookup
// of every authenticated API request, and the pages of the public post list. The services are
// handed these in place of the plain functions (services.ts) and cannot tell the difference.
import type { Config } from '../config.js';
import type { Db } from '../db/connect.js';
import { publicPages, type PublicPageFilter } from '../modules/posts/posts.repository.js';
import { tokenLookup } from '../modules/tokens/tokens.repository.js';
import { keptWhileUnchanged } from './read-cache.js';

/** Token lookups, about 1 KiB each. */
export function keptTokenLookup(db: Db, config: Pick<Config, 'tokenExpirationMinutes'>) {
  return keptWhileUnchanged(db.changes, { maxEntries: 10_000, key: (id: number) => id }, tokenLookup(db, config.tokenExpirationMinutes));
}

/** Pages of the public post list (up to 100 items each), each until its locale's next scheduled post comes out. */
export function keptPublicPages(db: Db) {
  const key = (filter: PublicPageFilter) => `${filter.locale}\n${filter.page}\n${filter.perPage}`;
  return keptWhileUnchanged(db.changes, { maxEntries: 256, key, until: (page) => page.nextPublication }, publicPages(db));
}
