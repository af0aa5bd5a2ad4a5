// The panel's queries: counts for the dashboard and the searchable, sortable tables of users,
// posts and tokens. Portable SQL only: case-insensitive search is lower(col) LIKE lower(?) with
// an explicit escape character (SQLite's LIKE ignores case, PostgreSQL's does not), text sorts
// compare lower(col) (the two databases collate differently), and NULLs sort last on both.
//
// The tables' reads are statementFamily()s (db/connect.ts): one statement per shape (which
// filters are set, the sort), built once and run with the values, since building them with
// Kysely at every page cost as much as running them. A search goes through every row, so on
// PostgreSQL a searched shape runs on the pool, not on the pipelined connection of short reads.
import { sql, type Expression, type Kysely, type OrderByModifiersCallbackExpression, type SqlBool } from 'kysely';
import { statementFamily, type Arg, type Db } from '../../db/connect.js';
import type { Database, Post, SettingRow, User } from '../../db/types.js';
import { containsPattern, paged, type Paginated, type SortDir } from './listing.js';

type Q = Kysely<Database>;

/** What a page of one of the panel's tables is asked for by: the query (search, filters, sort), the page and its size. */
export type TableRequest<Query> = { query: Query; page: number; perPage: number };
/** A reader of a table's pages: a page and the number of rows that match. */
export type TableReader<Query, Row> = (request: TableRequest<Query>) => Promise<Paginated<Row>>;

/** `column` contains `search`, ignoring case, on both databases (the audit log's filters use it too). */
export function contains(column: string, search: string): Expression<SqlBool> {
  return matches(column, containsPattern(search));
}

/** `column` matches the LIKE pattern `pattern` (a containsPattern(), or a statement's argument for one). */
function matches(column: string, pattern: unknown): Expression<SqlBool> {
  return sql<SqlBool>`lower(${sql.ref(column)}) like ${pattern} escape '\\'`;
}

/** A searched shape runs long: off the pipelined connection (see above). */
const searched = (shape: { search: boolean }) => shape.search;
/** The values of a table's statements: the search's pattern (unused by a shape without one), and the page. */
type Search = { pattern: string };
type Page = Search & { limit: number; offset: number };
const patternOf = (search: string) => (search === '' ? '' : containsPattern(search));

/** A sortable column of a table; `nullable` when it can hold NULL. */
type SortColumn = { column: string; text: boolean; nullable?: true };

function sortKey(column: string, text: boolean): Expression<unknown> {
  return text ? sql`lower(${sql.ref(column)})` : sql.ref(column);
}

/**
 * The direction of a sort, NULLs last on a column that can hold one. A NOT NULL column sorts
 * plainly: on PostgreSQL a DESC NULLS LAST cannot walk an ordinary index backwards, and the
 * tables' default orders are served by an index on (column, id) on both databases.
 */
function direction(sort: SortColumn, dir: SortDir): OrderByModifiersCallbackExpression {
  return (ob) => {
    const sorted = dir === 'asc' ? ob.asc() : ob.desc();
    return sort.nullable === true ? sorted.nullsLast() : sorted;
  };
}

// ---- dashboard --------------------------------------------------------------------------------

export async function userCounts(db: Q): Promise<{ total: number; verified: number }> {
  const row = await db
    .selectFrom('users')
    .select((eb) => [eb.fn.countAll<number | string>().as('total'), eb.fn.count<number | string>('email_verified_at').as('verified')])
    .executeTakeFirstOrThrow();
  return { total: Number(row.total), verified: Number(row.verified) };
}

export async function postCountsByStatus(db: Q): Promise<Record<string, number>> {
  const rows = await db.selectFrom('posts').select((eb) => ['status', eb.fn.countAll<number | string>().as('n')]).groupBy('status').execute();
  return Object.fromEntries(rows.map((row) => [row.status, Number(row.n)]));
}

/**
 * Tokens that still work: not past their own expires_at, and, when a global lifetime is set,
 * created within it (the token service applies both rules).
 */
export async function countActiveTokens(db: Q, now: Date, lifetimeMinutes: number | null): Promise<number> {
  let query = db
    .selectFrom('personal_access_tokens')
    .select((eb) => eb.fn.countAll<number | string>().as('n'))
    .where((eb) => eb.or([eb('expires_at', 'is', null), eb('expires_at', '>', now.toISOString())]));
  if (lifetimeMinutes !== null) query = query.where('created_at', '>', new Date(now.getTime() - lifetimeMinutes * 60_000).toISOString());
  return Number((await query.executeTakeFirstOrThrow()).n);
}

export type PostRow = Post & { author_name: string | null };

export function latestPosts(db: Q, limit: number): Promise<PostRow[]> {
  return db
    .selectFrom('posts')
    .leftJoin('users', 'users.id', 'posts.author_id')
    .selectAll('posts')
    .select('users.name as author_name')
    .orderBy('posts.created_at', 'desc')
    .orderBy('posts.id', 'desc')
    .limit(limit)
    .execute();
}

// ---- users ------------------------------------------------------------------------------------

export const USER_SORTS = ['name', 'email', 'verified', 'admin', 'created_at'] as const;
export type UserSort = (typeof USER_SORTS)[number];
const USER_SORT_COLUMNS: Record<UserSort, SortColumn> = {
  name: { column: 'users.name', text: true },
  email: { column: 'users.email', text: true },
  verified: { column: 'users.email_verified_at', text: false, nullable: true },
  admin: { column: 'users.is_admin', text: false },
  created_at: { column: 'users.created_at', text: false },
};

export type UserListRow = Pick<User, 'id' | 'name' | 'email' | 'email_verified_at' | 'is_admin' | 'created_at'> & { token_count: number };
export type UserQuery = { search: string; sort: UserSort; dir: SortDir };

type UserShape = { search: boolean };

function usersWhere(db: Q, arg: Arg<Search>, shape: UserShape) {
  let builder = db.selectFrom('users');
  if (shape.search) builder = builder.where((eb) => eb.or([matches('users.name', arg('pattern')), matches('users.email', arg('pattern'))]));
  return builder;
}

const usersCount = statementFamily('admin_users_count', (db, arg: Arg<Search>, shape: UserShape) => usersWhere(db, arg, shape).select((eb) => eb.fn.countAll<number | string>().as('n')), { pooled: searched });

const usersPage = statementFamily(
  'admin_users_page',
  (db, arg: Arg<Page>, shape: UserShape & { sort: UserSort; dir: SortDir }) => {
    const sort = USER_SORT_COLUMNS[shape.sort];
    return usersWhere(db, arg, shape)
      .select(['users.id', 'users.name', 'users.email', 'users.email_verified_at', 'users.is_admin', 'users.created_at'])
      .select((eb) =>
        eb
          .selectFrom('personal_access_tokens')
          .select((inner) => inner.fn.countAll<number | string>().as('n'))
          .whereRef('personal_access_tokens.user_id', '=', 'users.id')
          .as('token_count'),
      )
      .orderBy(sortKey(sort.column, sort.text), direction(sort, shape.dir))
      .orderBy('users.id', shape.dir)
      .limit(arg('limit'))
      .offset(arg('offset'));
  },
  { pooled: searched },
);

export async function countUsers(db: Db, query: UserQuery): Promise<number> {
  const row = await usersCount.first(db, { search: query.search !== '' }, { pattern: patternOf(query.search) });
  return Number(row?.n ?? 0);
}

export async function listUsers(db: Db, query: UserQuery, limit: number, offset: number): Promise<UserListRow[]> {
  const rows = await usersPage.all(db, { search: query.search !== '', sort: query.sort, dir: query.dir }, { pattern: patternOf(query.search), limit, offset });
  return rows.map((row) => ({ ...row, is_admin: Number(row.is_admin), token_count: Number(row.token_count ?? 0) }));
}

/** The users table's pages. */
export function usersTable(db: Db): TableReader<UserQuery, UserListRow> {
  return ({ query, page, perPage }) => paged(page, perPage, () => countUsers(db, query), (limit, offset) => listUsers(db, query, limit, offset));
}

// ---- posts ------------------------------------------------------------------------------------

export const POST_SORTS = ['title', 'status', 'locale', 'published_at', 'updated_at', 'created_at'] as const;
export type PostSort = (typeof POST_SORTS)[number];
const POST_SORT_COLUMNS: Record<PostSort, SortColumn> = {
  title: { column: 'posts.title', text: true },
  status: { column: 'posts.status', text: false },
  locale: { column: 'posts.locale', text: false },
  published_at: { column: 'posts.published_at', text: false, nullable: true },
  updated_at: { column: 'posts.updated_at', text: false },
  created_at: { column: 'posts.created_at', text: false },
};

export type PostQuery = { search: string; sort: PostSort; dir: SortDir; status: Post['status'] | null; locale: string | null };

type PostShape = { search: boolean; status: boolean; locale: boolean };
type PostFilters = Search & { status: string; locale: string };

function postsWhere(db: Q, arg: Arg<PostFilters>, shape: PostShape) {
  let builder = db.selectFrom('posts');
  if (shape.search) {
    builder = builder.where((eb) => eb.or([matches('posts.title', arg('pattern')), matches('posts.slug', arg('pattern')), matches('posts.excerpt', arg('pattern'))]));
  }
  if (shape.status) builder = builder.where('posts.status', '=', arg('status') as Post['status']);
  if (shape.locale) builder = builder.where('posts.locale', '=', arg('locale'));
  return builder;
}

const postsCount = statementFamily(
  'admin_posts_count',
  (db, arg: Arg<PostFilters>, shape: PostShape) => {
    if (shape.search) return postsWhere(db, arg, shape).select((eb) => eb.fn.countAll<number | string>().as('n'));
    // Without a search the total comes from post_counts (kept by triggers per status and locale:
    // a few rows) instead of counting the whole table on every page of it.
    let counts = db.selectFrom('post_counts').select((eb) => eb.fn.coalesce(eb.fn.sum<number | string>('n'), eb.lit(0)).as('n'));
    if (shape.status) counts = counts.where('status', '=', arg('status') as Post['status']);
    if (shape.locale) counts = counts.where('locale', '=', arg('locale'));
    return counts;
  },
  { pooled: searched },
);

const postsPage = statementFamily(
  'admin_posts_page',
  (db, arg: Arg<PostFilters & Page>, shape: PostShape & { sort: PostSort; dir: SortDir }) => {
    const sort = POST_SORT_COLUMNS[shape.sort];
    return postsWhere(db, arg, shape)
      .select(['posts.id', 'posts.title', 'posts.slug', 'posts.status', 'posts.locale', 'posts.published_at', 'posts.updated_at'])
      .orderBy(sortKey(sort.column, sort.text), direction(sort, shape.dir))
      .orderBy('posts.id', shape.dir)
      .limit(arg('limit'))
      .offset(arg('offset'));
  },
  { pooled: searched },
);

const postShape = (query: PostQuery): PostShape => ({ search: query.search !== '', status: query.status !== null, locale: query.locale !== null });
const postFilters = (query: PostQuery): PostFilters => ({ pattern: patternOf(query.search), status: query.status ?? '', locale: query.locale ?? '' });

/** How many posts match. */
export async function countPostsMatching(db: Db, query: PostQuery): Promise<number> {
  const row = await postsCount.first(db, postShape(query), postFilters(query));
  return Number(row?.n ?? 0);
}

/** A post as the panel's table shows it: never its body, which a page of the table has no use for. */
export type PostListRow = Pick<Post, 'id' | 'title' | 'slug' | 'status' | 'locale' | 'published_at' | 'updated_at'>;

export function listPostsMatching(db: Db, query: PostQuery, limit: number, offset: number): Promise<PostListRow[]> {
  return postsPage.all(db, { ...postShape(query), sort: query.sort, dir: query.dir }, { ...postFilters(query), limit, offset });
}

/** The posts table's pages. */
export function postsTable(db: Db): TableReader<PostQuery, PostListRow> {
  return ({ query, page, perPage }) =>
    paged(page, perPage, () => countPostsMatching(db, query), (limit, offset) => listPostsMatching(db, query, limit, offset));
}

export function findPostById(db: Q, id: number): Promise<Post | undefined> {
  return db.selectFrom('posts').selectAll().where('id', '=', id).executeTakeFirst();
}

// ---- tokens -----------------------------------------------------------------------------------

export const TOKEN_SORTS = ['name', 'user', 'last_used_at', 'created_at'] as const;
export type TokenSort = (typeof TOKEN_SORTS)[number];
const TOKEN_SORT_COLUMNS: Record<TokenSort, SortColumn> = {
  name: { column: 't.name', text: true },
  user: { column: 'u.email', text: true },
  last_used_at: { column: 't.last_used_at', text: false, nullable: true },
  created_at: { column: 't.created_at', text: false },
};

/** A token as the panel shows it: never its hash. */
export type TokenListRow = {
  id: number;
  name: string;
  abilities: string;
  last_used_at: string | null;
  expires_at: string | null;
  created_at: string;
  user_id: number;
  user_name: string;
  user_email: string;
};
export type TokenQuery = { search: string; sort: TokenSort; dir: SortDir; userId: number | null };

type TokenShape = { search: boolean; user: boolean };
type TokenFilters = Search & { userId: number };

function tokensWhere(db: Q, arg: Arg<TokenFilters>, shape: TokenShape) {
  let builder = db.selectFrom('personal_access_tokens as t').innerJoin('users as u', 'u.id', 't.user_id');
  if (shape.search) {
    builder = builder.where((eb) => eb.or([matches('t.name', arg('pattern')), matches('u.name', arg('pattern')), matches('u.email', arg('pattern'))]));
  }
  if (shape.user) builder = builder.where('t.user_id', '=', arg('userId'));
  return builder;
}

const tokensCount = statementFamily('admin_tokens_count', (db, arg: Arg<TokenFilters>, shape: TokenShape) => tokensWhere(db, arg, shape).select((eb) => eb.fn.countAll<number | string>().as('n')), {
  pooled: searched,
});

const tokensPage = statementFamily(
  'admin_tokens_page',
  (db, arg: Arg<TokenFilters & Page>, shape: TokenShape & { sort: TokenSort; dir: SortDir }) => {
    const sort = TOKEN_SORT_COLUMNS[shape.sort];
    return tokensWhere(db, arg, shape)
      .select(['t.id', 't.name', 't.abilities', 't.last_used_at', 't.expires_at', 't.created_at', 't.user_id', 'u.name as user_name', 'u.email as user_email'])
      .orderBy(sortKey(sort.column, sort.text), direction(sort, shape.dir))
      .orderBy('t.id', shape.dir)
      .limit(arg('limit'))
      .offset(arg('offset'));
  },
  { pooled: searched },
);

const tokenShape = (query: TokenQuery): TokenShape => ({ search: query.search !== '', user: query.userId !== null });
const tokenFilters = (query: TokenQuery): TokenFilters => ({ pattern: patternOf(query.search), userId: query.userId ?? 0 });

export async function countTokens(db: Db, query: TokenQuery): Promise<number> {
  const row = await tokensCount.first(db, tokenShape(query), tokenFilters(query));
  return Number(row?.n ?? 0);
}

export function listTokens(db: Db, query: TokenQuery, limit: number, offset: number): Promise<TokenListRow[]> {
  return tokensPage.all(db, { ...tokenShape(query), sort: query.sort, dir: query.dir }, { ...tokenFilters(query), limit, offset });
}

export function findTokenById(db: Q, id: number): Promise<TokenListRow | undefined> {
  return db
    .selectFrom('personal_access_tokens as t')
    .innerJoin('users as u', 'u.id', 't.user_id')
    .select(['t.id', 't.name', 't.abilities', 't.last_used_at', 't.expires_at', 't.created_at', 't.user_id', 'u.name as user_name', 'u.email as user_email'])
    .where('t.id', '=', id)
    .executeTakeFirst();
}

// ---- settings ---------------------------------------------------------------------------------

export function findSetting(db: Q, key: string): Promise<SettingRow | undefined> {
  return db.selectFrom('settings').selectAll().where('key', '=', key).executeTakeFirst();
}
