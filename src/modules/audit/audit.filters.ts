// The audit page's filters, read from its query string (so a filtered page can be bookmarked and
// shared): a search, an actor, an action and a range of days. A value that cannot be used never
// fails the page: it is left out, and the page says why beside its field.
import type { Message } from '../i18n/translator.js';
import { AUDIT_ACTIONS } from './audit.service.js';
import type { AuditQuery } from './audit.repository.js';

/** What the filter form shows back: the values as they were asked for (trimmed). */
export type AuditFilterValues = { q: string; actor: string; action: string; from: string; until: string };

export type AuditFilters = {
  values: AuditFilterValues;
  /** The query the values make, without the ones refused. */
  query: AuditQuery;
  /** Why a value was left out, by field. */
  errors: Partial<Record<keyof AuditFilterValues, Message>>;
};

const SEARCH_MAX = 100;
const ACTOR_MAX = 255;
const DAY = /^(\d{4})-(\d{2})-(\d{2})$/;
const DAY_MS = 86_400_000;
// PostgreSQL's timestamps and toISOString's plain form both end at year 9999.
const FIRST_YEAR = 1900;
const LAST_YEAR = 9999;

// A NUL never reaches a query or the page: PostgreSQL's text cannot hold one.
function text(value: unknown, max: number): string {
  const first = Array.isArray(value) ? value[0] : value;
  return typeof first === 'string' ? first.replace(/\0/g, '').trim().slice(0, max) : '';
}

/** Midnight UTC of a `YYYY-MM-DD` day, or null for anything else (2026-02-30 included). */
export function parseDay(value: string): number | null {
  const match = DAY.exec(value);
  if (match === null) return null;
  const [year, month, day] = [Number(match[1]), Number(match[2]), Number(match[3])];
  if (year < FIRST_YEAR || year > LAST_YEAR) return null;
  const time = Date.UTC(year, month - 1, day);
  const date = new Date(time);
  return date.getUTCFullYear() === year && date.getUTCMonth() === month - 1 && date.getUTCDate() === day ? time : null;
}

/**
 * Reads the filters of the audit page. Days are whole days in UTC, as every time of the panel
 * is shown: `from` counts from its midnight, `until` up to the end of its day.
 */
export function parseAuditFilters(query: unknown): AuditFilters {
  const q = (typeof query === 'object' && query !== null ? query : {}) as Record<string, unknown>;
  const values: AuditFilterValues = {
    q: text(q.q, SEARCH_MAX),
    actor: text(q.actor, ACTOR_MAX),
    action: text(q.action, 64),
    from: text(q.from, 32),
    until: text(q.until, 32),
  };
  const errors: AuditFilters['errors'] = {};

  let action: string | null = null;
  if (values.action !== '') {
    if ((AUDIT_ACTIONS as readonly string[]).includes(values.action)) action = values.action;
    else errors.action = { key: 'audit_filters.errors.action', replace: { value: values.action } };
  }

  const day = (field: 'from' | 'until'): number | null => {
    if (values[field] === '') return null;
    const time = parseDay(values[field]);
    if (time === null) errors[field] = { key: 'audit_filters.errors.date' };
    return time;
  };
  const from = day('from');
  let until = day('until');
  if (from !== null && until !== null && until < from) {
    errors.until = { key: 'audit_filters.errors.range' };
    until = null;
  }
  // The day after `until`, unless past the last one a timestamp holds (then no upper bound).
  const before = until === null || new Date(until + DAY_MS).getUTCFullYear() > LAST_YEAR ? null : new Date(until + DAY_MS).toISOString();

  return {
    values,
    query: { search: values.q, actor: values.actor, action, from: from === null ? null : new Date(from).toISOString(), before },
    errors,
  };
}

/** True when any filter narrows the log (a refused value does not). */
export function isFiltered(query: AuditQuery): boolean {
  return query.search !== '' || query.actor !== '' || query.action !== null || query.from !== null || query.before !== null;
}
