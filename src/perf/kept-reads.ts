// The reads kept in memory (read-cache.ts), each a repository function wrapped: the token lookup
// of every authenticated API request, the pages of the public post list and the site settings
// every page shows. The services are handed these in place of the plain functions (services.ts)
// and cannot tell the difference.
import type { Config } from '../config.js';
import type { Db } from '../db/connect.js';
import { publicPages, type PublicPageFilter } from '../modules/posts/posts.repository.js';
import { siteValues } from '../modules/settings/settings.repository.js';
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

/**
 * A document rendered from the published posts (the sitemap: up to 50,000 addresses, most of a
 * second to build on a big site), per the settings it shows (`key`), until a write or until the
 * next scheduled post comes out. Each request still looks at the change counter: a query on
 * PostgreSQL instead of a full read and render.
 */
export function keptDocument<Arg>(db: Db, key: (arg: Arg) => string, render: (arg: Arg) => Promise<{ body: string; until: number | null }>) {
  return keptWhileUnchanged(db.changes, { maxEntries: 8, key, until: (document) => document.until }, render);
}

/**
 * The site settings every page shows (name, languages): on SQLite kept while the database is
 * unchanged, so a page costs no query for them. PostgreSQL's `data_version` does not move with
 * the settings table (no trigger on it), and looking at it would cost the same one query as
 * reading the four rows: there they are read at each call.
 */
export function keptSiteValues(db: Db) {
  if (!db.changes.sync) return siteValues(db);
  const read = siteValues(db);
  const kept = keptWhileUnchanged(db.changes, { maxEntries: 1, key: () => 'site' }, () => read());
  return () => kept(undefined);
}
