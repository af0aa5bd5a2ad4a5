// The reads kept in memory (read-cache.ts), each a repository function wrapped: the token lookup
// of every authenticated API request, the pages of the public post list, the site settings
// every page shows, the pages of the panel's tables of posts and users, what the security page
// lists (passkeys, sessions, a pending email change) and the tokens page's list. The services are handed these in place of the plain functions (services.ts)
// and cannot tell the difference.
import type { Config } from '../config.js';
import type { Db } from '../db/connect.js';
import type { AdminTables } from '../modules/admin/admin.service.js';
import type { Paginated } from '../modules/admin/listing.js';
import { postsTable, usersTable, type PostQuery, type TableRequest, type UserQuery } from '../modules/admin/admin.repository.js';
import { pendingRows, type PendingRowRead } from '../modules/email-change/email-change.service.js';
import { passkeysOf, type PasskeyRow } from '../modules/passkeys/passkeys.repository.js';
import { aliveSessionsOf, type AliveSessions } from '../modules/sessions/browser-sessions.service.js';
import { publicPages, type PublicPageFilter } from '../modules/posts/posts.repository.js';
import { siteValues } from '../modules/settings/settings.repository.js';
import { tokenLookup } from '../modules/tokens/tokens.repository.js';
import { tokensOf, type OwnedTokenRow } from '../modules/tokens/tokens.service.js';
import { findUserById } from '../modules/users/users.repository.js';
import { sessionRows } from '../modules/sessions/session-store.js';
import type { MaybePromise } from '../lib/maybe-promise.js';
import { keptWhileUnchanged } from './read-cache.js';

/** Token lookups, about 1 KiB each. */
export function keptTokenLookup(db: Db, config: Pick<Config, 'tokenExpirationMinutes'>) {
  return keptWhileUnchanged(db.changes, { maxEntries: 10_000, key: (id: number) => id }, tokenLookup(db, config.tokenExpirationMinutes));
}

/**
 * Users by id, about 0.5 KiB each: every signed-in page reads its user (the web guard), and a
 * user's change moves the counter on both databases. Frozen: one object answers many requests.
 */
export function keptUserById(db: Db) {
  return keptWhileUnchanged(db.changes, { maxEntries: 10_000, key: (id: number) => id }, async (id: number) => {
    const user = await findUserById(db.kysely, id);
    return user === undefined ? undefined : Object.freeze(user);
  });
}

/**
 * Session rows by id: every signed-in page reads its session. On SQLite any write to the file (a
 * session saved or ended through any instance) is seen by the next look; on PostgreSQL every
 * change to a session moves `session_version` (migration 2026_11_29_000001), read in the same
 * look as `data_version`, so a session's change does not drop the other kept reads.
 */
export function keptSessionRows(db: Db) {
  const read = sessionRows(db);
  return keptWhileUnchanged(db.sessionChanges, { maxEntries: 10_000, key: (id: string) => id }, async (id: string) => {
    const row = await read(id);
    return row === undefined ? undefined : Object.freeze(row);
  });
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
 * The site settings every page shows (name, languages), kept while the database is unchanged: on
 * SQLite a page costs no query for them; on PostgreSQL (where a settings change moves
 * `data_version`, migration 2026_11_27_000003) a share of the look at the counter that the
 * requests of one event-loop turn send together, not a query each.
 */
export function keptSiteValues(db: Db) {
  const read = siteValues(db);
  const kept = keptWhileUnchanged(db.changes, { maxEntries: 1, key: () => 'site' }, () => read());
  return () => kept(undefined);
}

/**
 * The pages of the panel's tables of posts and of users, each with its count, per query, page
 * and size (up to 256 of each, 15 rows a page). What they show moves the counters on both
 * databases: on PostgreSQL any change to a post, a user added, changed or removed
 * (`data_version`), and the users' numbers of tokens: a token revoked moves `data_version`, a
 * token issued only `token_version` (migration 2026_11_30_000002), so the users' table is kept
 * behind both. Frozen: one answer serves many pages.
 */
export function keptAdminTables(db: Db): AdminTables {
  const key = <Query>(fields: (query: Query) => unknown[]) => (request: TableRequest<Query>) => JSON.stringify([...fields(request.query), request.page, request.perPage]);
  const frozen =
    <Query, Row>(read: (request: TableRequest<Query>) => Promise<Paginated<Row>>) =>
    async (request: TableRequest<Query>): Promise<Paginated<Row>> => {
      const page = await read(request);
      page.items.forEach((row) => Object.freeze(row));
      Object.freeze(page.items);
      return Object.freeze(page);
    };
  return {
    posts: keptWhileUnchanged(
      db.changes,
      { maxEntries: 256, key: key((query: PostQuery) => [query.search, query.status, query.locale, query.sort, query.dir]) },
      frozen(postsTable(db)),
    ),
    users: keptWhileUnchanged(db.dataOrTokenChanges, { maxEntries: 256, key: key((query: UserQuery) => [query.search, query.sort, query.dir]) }, frozen(usersTable(db))),
  };
}

// The security page's lists, per user (10,000 users each). On PostgreSQL every change to the
// passkeys and to the email changes moves data_version, and a new session moves
// session_version (migration 2026_11_30_000001).

/** A user's passkeys (a few rows; none is kept too). Frozen: one list serves many pages. */
export function keptPasskeysOfUser(db: Db): (userId: number) => MaybePromise<readonly PasskeyRow[]> {
  return keptWhileUnchanged(db.changes, { maxEntries: 10_000, key: (userId: number) => userId }, async (userId: number) =>
    Object.freeze((await passkeysOf(db, userId)).map((row) => Object.freeze(row))),
  );
}

/** A user's email_changes row or none; whether it has expired is the service's to say, at each read. */
export function keptPendingEmailChanges(db: Db): PendingRowRead {
  const read = pendingRows(db);
  return keptWhileUnchanged(db.changes, { maxEntries: 10_000, key: (userId: number) => userId }, async (userId: number) => {
    const { row } = await read(userId);
    return Object.freeze({ row: row === undefined ? undefined : Object.freeze(row) });
  });
}

/** A user's sessions alive when read, until the first of them ends (or a session changes). */
export function keptAliveSessions(db: Db, absoluteMinutes: number): (userId: number) => MaybePromise<AliveSessions> {
  const read = aliveSessionsOf(db, absoluteMinutes);
  return keptWhileUnchanged(db.sessionChanges, { maxEntries: 10_000, key: (userId: number) => userId, until: (alive) => alive.until }, async (userId: number) => {
    const alive = await read(userId);
    return Object.freeze({ rows: Object.freeze(alive.rows.map((row) => Object.freeze(row))), until: alive.until });
  });
}

/**
 * A user's own tokens, as the tokens page lists them with their last use, behind the tokens'
 * own counter (any change to a token, last_used_at included: on PostgreSQL `token_version`,
 * migration 2026_11_30_000001), so that a token's use does not empty the other kept reads.
 * Whether a token has expired is the service's to say, at each read.
 */
export function keptTokensOfUser(db: Db): (userId: number) => MaybePromise<readonly OwnedTokenRow[]> {
  const read = tokensOf(db);
  return keptWhileUnchanged(db.tokenChanges, { maxEntries: 10_000, key: (userId: number) => userId }, async (userId: number) =>
    Object.freeze((await read(userId)).map((row) => Object.freeze(row))),
  );
}
