// What every panel route shares beyond src/http/shared/forms.ts: the page wrapper (admin layout,
// current section, the signed-in administrator), who is acting (for the audit line), and the
// links of sortable, paged tables.
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { User } from '../../db/types.js';
import type { Acting } from '../../modules/audit/audit.service.js';
import type { ListParams } from '../../modules/admin/listing.js';
import { formatDateTime, NO_MOMENT } from '../../modules/i18n/formats.js';
import { t, type Locale } from '../../modules/i18n/translator.js';
import { AppError, forbidden, notFound } from '../../modules/shared/errors.js';
import { localeFor } from '../shared/forms.js';

export type AdminSection = 'dashboard' | 'users' | 'posts' | 'media' | 'settings' | 'tokens' | 'audit';

/** The administrator making this request; the 'admin' guard has already checked the access. */
export function actorOf(request: FastifyRequest): User {
  if (request.adminUser === null) throw forbidden();
  return request.adminUser;
}

/** A stored ISO time as the panel shows it: as the site does (formatDateTime), or a dash for none. */
export function formatWhen(locale: string, iso: string | null | undefined): string {
  return iso === null || iso === undefined ? NO_MOMENT : formatDateTime(locale, iso);
}

/** Renders a panel page in the admin layout. */
export function adminPage(
  request: FastifyRequest,
  reply: FastifyReply,
  template: string,
  section: AdminSection | null,
  data: Record<string, unknown> = {},
  status = 200,
): FastifyReply {
  const admin = request.adminUser;
  const locale = localeFor(request.server, request);
  // The page context's csrf() makes one token for every form of the page (the sign-out button, a
  // table's row forms), and none from a session the login page's visitor does not have.
  return reply.page(template, { when: (iso: string | null | undefined) => formatWhen(locale, iso), ...data, section, admin: admin === null ? null : { id: admin.id, name: admin.name, email: admin.email } }, status);
}

/** The request's administrator and address, for the audit line of a change the services make. */
export function acting(request: FastifyRequest): Acting {
  return { actor: actorOf(request), ip: request.ip };
}

/** The numeric id of a path, or a 404 for anything else. */
export function idParam(request: FastifyRequest): number {
  const raw = (request.params as Record<string, unknown>).id;
  const id = typeof raw === 'string' && /^\d{1,15}$/.test(raw) ? Number(raw) : Number.NaN;
  if (!Number.isSafeInteger(id) || id < 1) throw notFound();
  return id;
}

/** A translated 403 for a rule the panel enforces (e.g. deleting oneself). */
export function refused(locale: Locale, key: string): AppError {
  return new AppError(403, t(locale, key));
}

type QueryValues = Record<string, string | number | null | undefined>;

/** `path?a=1&b=2` with the empty values left out (defaults need no parameter). */
export function withQuery(path: string, values: QueryValues): string {
  const search = new URLSearchParams();
  for (const [key, value] of Object.entries(values)) {
    if (value !== null && value !== undefined && value !== '') search.set(key, String(value));
  }
  const text = search.toString();
  return text === '' ? path : `${path}?${text}`;
}

export type TableLinks = {
  /** The link of a column header: sorts by it, ascending first, flipping when already sorted by it. */
  sortUrl(column: string): string;
  /** The aria-sort value of a column header. */
  ariaSort(column: string): 'ascending' | 'descending' | 'none';
  pageUrl(page: number): string;
};

/** Links of a sortable, paged table that keep its search and filters. */
export function tableLinks<S extends string>(path: string, params: ListParams<S>, filters: QueryValues = {}): TableLinks {
  const base = { q: params.search, ...filters };
  return {
    sortUrl: (column) => withQuery(path, { ...base, sort: column, dir: params.sort === column && params.dir === 'asc' ? 'desc' : 'asc' }),
    ariaSort: (column) => (params.sort !== column ? 'none' : params.dir === 'asc' ? 'ascending' : 'descending'),
    pageUrl: (page) => withQuery(path, { ...base, sort: params.sort, dir: params.dir, page }),
  };
}
