// Absolute page links that keep every other query parameter and set `page`.

function urlFor(base: string, query: Record<string, unknown>, page: number): string {
  const params = new URLSearchParams();
  for (const [key, value] of Object.entries(query)) {
    if (key !== 'page' && value !== undefined && value !== null) params.set(key, String(value));
  }
  params.set('page', String(page));
  return `${base}?${params.toString()}`;
}

/**
 * The links of page `page` of `lastPage`, as Laravel's paginator gives them: `prev` is always the
 * page before this one and `next` the page after it while there is one, so a page past the last
 * (an empty `data`) has `prev` one less than itself and no `next`; `first` and `last` name the
 * ends of what there is (`last` is 1 when there is nothing).
 */
export function pageLinks(base: string, query: Record<string, unknown>, page: number, lastPage: number) {
  return {
    first: urlFor(base, query, 1),
    next: page < lastPage ? urlFor(base, query, page + 1) : null,
    prev: page > 1 ? urlFor(base, query, page - 1) : null,
    last: urlFor(base, query, lastPage),
  };
}
