// What every panel route shares: the page wrapper (admin layout, current section, the signed-in
// administrator), inline form errors, the audit line, and the links of sortable, paged tables.
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { User } from '../../db/types.js';
import type { AuditAction, AuditDetails, AuditSubject } from '../../modules/audit/audit.service.js';
import type { ListParams } from '../../modules/admin/listing.js';
import { t, type Locale } from '../../modules/i18n/translator.js';
import { SLUG_TAKEN } from '../../modules/posts/posts.service.js';
import { AppError, ValidationError, forbidden, notFound, type FieldErrors } from '../../modules/shared/errors.js';
import { EMAIL_TAKEN } from '../../modules/users/users.service.js';
import { flash, localeOf } from '../../plugins/views.js';
import { formatValidationErrors } from '../shared/validation.js';

export type AdminSection = 'dashboard' | 'users' | 'posts' | 'settings' | 'tokens' | 'audit';

export function localeFor(app: FastifyInstance, request: FastifyRequest): Locale {
  return localeOf(request, app.config.locale);
}

/** The administrator making this request; the 'admin' guard has already checked the access. */
export function actorOf(request: FastifyRequest): User {
  if (request.adminUser === null) throw forbidden();
  return request.adminUser;
}

/** A stored ISO time as the panel shows it: UTC, to the minute (the forms take UTC too). */
export function formatWhen(iso: string | null | undefined): string {
  if (iso === null || iso === undefined) return '—';
  const date = new Date(iso);
  return Number.isNaN(date.getTime()) ? '—' : `${date.toISOString().slice(0, 16).replace('T', ' ')} UTC`;
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
  return reply.page(template, { when: formatWhen, ...data, section, admin: admin === null ? null : { id: admin.id, name: admin.name, email: admin.email } }, status);
}

/** Stores a success message for the next page and sends the browser there (Post/Redirect/Get). */
export function done(request: FastifyRequest, reply: FastifyReply, status: string, location: string): FastifyReply {
  flash(request, { status });
  return reply.redirect(location, 303);
}

/** Writes the audit line of an action by the request's administrator. */
export async function audit(app: FastifyInstance, request: FastifyRequest, action: AuditAction, subject: AuditSubject, details: AuditDetails = {}): Promise<void> {
  await app.services.audit.record(actorOf(request), action, subject, details, request.ip);
}

// Messages the domain writes in English, mapped to the validation keys of the locale files. A
// Map, since any text is looked up in it: an object would answer `constructor` from its prototype.
const KNOWN = new Map<string, [string, string]>([
  [EMAIL_TAKEN, ['validation.unique', 'email']],
  [SLUG_TAKEN, ['validation.unique', 'slug']],
]);

/** Field errors in the visitor's language: message keys are translated, known English texts mapped. */
export function localizeErrors(errors: FieldErrors, locale: Locale): FieldErrors {
  return Object.fromEntries(
    Object.entries(errors).map(([field, messages]) => [
      field,
      messages.map((message) => {
        const known = KNOWN.get(message);
        return known === undefined ? t(locale, message) : t(locale, known[0], { attribute: known[1] });
      }),
    ]),
  );
}

/** The inline errors of a form whose schema check failed (routes use attachValidation), or null. */
export function schemaErrors(request: FastifyRequest, locale: Locale): FieldErrors | null {
  const failure = request.validationError as (Error & { validation?: unknown }) | undefined;
  if (failure === undefined) return null;
  const validation = Array.isArray(failure.validation) ? failure.validation : [];
  const formatted = formatValidationErrors(validation, locale);
  // A body that is not an object at all (a JSON array or string) names no field: it is still a
  // failure, reported on the form as a whole, so no handler reads fields from it.
  if (Object.keys(formatted.errors).length === 0) return { _form: [formatted.message] };
  return formatted.errors;
}

/** Field errors of a ValidationError thrown by a service; anything else is thrown on. */
export function serviceErrors(error: unknown, locale: Locale): FieldErrors {
  if (error instanceof ValidationError) return localizeErrors(error.errors, locale);
  throw error;
}

/**
 * What a form sent, to fill it again after an error; passwords and the CSRF token never. The
 * keys are the client's: Object.fromEntries makes each an own property (an assignment to
 * `old['__proto__']` would call the prototype setter instead).
 */
export function oldInput(body: unknown): Record<string, string> {
  if (typeof body !== 'object' || body === null) return {};
  return Object.fromEntries(
    Object.entries(body as Record<string, unknown>).filter(
      (entry): entry is [string, string] => entry[0] !== '_token' && !/password/.test(entry[0]) && typeof entry[1] === 'string',
    ),
  );
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
