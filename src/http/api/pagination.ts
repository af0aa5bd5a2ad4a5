// Absolute page links that keep every other query parameter and set `page`.

function urlFor(base: string, query: Record<string, unknown>, page: number): string {
  const params = new URLSearchParams();
  for (const [key, value] of Object.entries(query)) {
    if (key !== 'page' && value !== undefined && value !== null) params.set(key, String(value));
  }
  params.set('page', String(page));
  return `${base}?${params.toString()}`;
}

export function pageLinks(base: string, query: Record<string, unknown>, page: number, lastPage: number) {
  return {
    first: urlFor(base, query, 1),
    next: page < lastPage ? urlFor(base, query, page + 1) : null,
    prev: page > 1 ? urlFor(base, query, Math.min(page - 1, lastPage)) : null,
    last: urlFor(base, query, lastPage),
  };
}
