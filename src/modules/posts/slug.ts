/** A URL slug from a title: ASCII letters and digits separated by single dashes. */
export function slugify(title: string): string {
  return title
    .normalize('NFKD')
    .replace(/[\u0300-\u036f]/g, '')
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^-+|-+$/g, '')
    .slice(0, 200)
    .replace(/-+$/, '');
}

export const SLUG_PATTERN = '^[a-z0-9]+(?:-[a-z0-9]+)*$';
