// The panel's tables: what a query string may ask for (search, filters, sort, page) read into
// safe values, and the page arithmetic. Sorting is only ever by a column named in an allowlist,
// so a query string can never reach the SQL as an identifier.

export type SortDir = 'asc' | 'desc';

export type ListParams<S extends string> = {
  search: string;
  sort: S;
  dir: SortDir;
  page: number;
  perPage: number;
};

export type Paginated<T> = { items: T[]; total: number; page: number; perPage: number; lastPage: number };

export const PER_PAGE = 15;
const SEARCH_MAX = 100;

function text(value: unknown): string {
  const first = Array.isArray(value) ? value[0] : value;
  return typeof first === 'string' ? first : '';
}

/** One value of `allowed`, or null when the query string has none (or one not in the list). */
export function pick<T extends string>(value: unknown, allowed: readonly T[]): T | null {
  const raw = text(value);
  return (allowed as readonly string[]).includes(raw) ? (raw as T) : null;
}

/**
 * Reads search, sort, dir and page from a query string. Anything unexpected falls back to the
 * default instead of failing: a table link with a stale or hand-edited query still opens.
 */
export function parseListParams<S extends string>(
  query: unknown,
  sorts: readonly S[],
  defaults: { sort: S; dir: SortDir },
  perPage = PER_PAGE,
): ListParams<S> {
  const q = (typeof query === 'object' && query !== null ? query : {}) as Record<string, unknown>;
  const page = Number(text(q.page));
  return {
    search: text(q.q).trim().slice(0, SEARCH_MAX),
    sort: pick(q.sort, sorts) ?? defaults.sort,
    dir: pick(q.dir, ['asc', 'desc'] as const) ?? defaults.dir,
    page: Number.isSafeInteger(page) && page >= 1 ? page : 1,
    perPage,
  };
}

/** The last page for a total (at least 1), and the requested page kept within 1..last. */
export function pageWindow(total: number, page: number, perPage: number): { page: number; lastPage: number; offset: number } {
  const lastPage = Math.max(1, Math.ceil(total / perPage));
  const clamped = Math.min(Math.max(1, page), lastPage);
  return { page: clamped, lastPage, offset: (clamped - 1) * perPage };
}

/**
 * A LIKE pattern matching `search` anywhere, with LIKE's own wildcards escaped (the query uses
 * ESCAPE '\'): searching for "100%" finds "100%", not everything starting with "100". A NUL
 * goes: PostgreSQL's text cannot hold one (the query failed with a 500), so no value has one.
 */
export function containsPattern(search: string): string {
  return `%${search.toLowerCase().replace(/\0/g, '').replace(/[\\%_]/g, (c) => `\\${c}`)}%`;
}

/** One page of a list, with the count: a page past the end shows the last one. */
export async function paged<T>(
  page: number,
  perPage: number,
  count: () => Promise<number>,
  list: (limit: number, offset: number) => Promise<T[]>,
): Promise<Paginated<T>> {
  // The page asked for is read beside the count, not after it (one round trip, not two, on
  // PostgreSQL); read again only when the count puts it past the end.
  const asked = Math.max(1, page);
  const [total, first] = await Promise.all([count(), list(perPage, (asked - 1) * perPage)]);
  const window = pageWindow(total, page, perPage);
  const items = window.page === asked ? first : await list(perPage, window.offset);
  return { items, total, page: window.page, perPage, lastPage: window.lastPage };
}
