// The audit log of the panel, as Filament's table filters show a resource: a search, the actor,
// the action and a range of days, all in the query string (a filtered page can be bookmarked),
// each active filter shown as an indicator that removes it, and the pages keeping the filters.
import type { FastifyPluginAsync } from 'fastify';
import { parseListParams } from '../../modules/admin/listing.js';
import { parseAuditFilters, isFiltered, type AuditFilterValues } from '../../modules/audit/audit.filters.js';
import { AUDIT_ACTIONS } from '../../modules/audit/audit.service.js';
import { formatDate } from '../../modules/i18n/formats.js';
import { t, translate, type Locale } from '../../modules/i18n/translator.js';
import { localeFor } from '../shared/forms.js';
import { adminPage, tableLinks, withQuery } from './support.js';

const PATH = '/admin/audit';
const PER_PAGE = 25;

// The action select's groups. An action no group names (one added later) lands in "other", so
// the select always offers every action.
const SIGN_INS: readonly string[] = ['auth.login', 'admin.login', 'admin.logout', 'auth.token_issued'];
const GROUP_OF_PREFIX: Record<string, string> = { admin: 'users', user: 'users', account: 'users', post: 'posts', setting: 'settings', token: 'tokens', tokens: 'tokens', media: 'media' };
const GROUPS = ['sign_ins', 'users', 'posts', 'settings', 'tokens', 'media', 'other'] as const;

function groupOf(action: string): string {
  if (SIGN_INS.includes(action)) return 'sign_ins';
  return GROUP_OF_PREFIX[action.slice(0, action.indexOf('.'))] ?? 'other';
}

/** An action's name in the select and the indicators; the action itself when it has none yet. */
export function actionLabel(locale: Locale, action: string): string {
  const key = `audit_filters.action.${action}`;
  const label = t(locale, key);
  return label === key ? action : label;
}

type ActionGroup = { label: string; options: { value: string; label: string }[] };

function actionGroups(locale: Locale): ActionGroup[] {
  return GROUPS.map((group) => ({
    label: t(locale, `audit_filters.group.${group}`),
    options: AUDIT_ACTIONS.filter((action) => groupOf(action) === group).map((action) => ({ value: action, label: actionLabel(locale, action) })),
  })).filter((group) => group.options.length > 0);
}

type Indicator = { label: string; removeUrl: string };

export const auditRoutes: FastifyPluginAsync = async (app) => {
  app.get('/audit', { config: { auth: 'admin' } }, async (request, reply) => {
    const locale = localeFor(app, request);
    const params = parseListParams(request.query, ['created_at'] as const, { sort: 'created_at', dir: 'desc' }, PER_PAGE);
    const { values, query, errors } = parseAuditFilters(request.query);
    const result = await app.services.audit.page(params.page, params.perPage, query);

    // The values in use (a refused one is left out of every link, as it is of the query).
    const used: AuditFilterValues = {
      q: query.search,
      actor: query.actor,
      action: query.action ?? '',
      from: query.from === null ? '' : values.from,
      until: query.before === null ? '' : values.until,
    };
    const without = (field: keyof AuditFilterValues) => withQuery(PATH, { ...used, [field]: '' });
    const day = (iso: string) => formatDate(locale, { dateStyle: 'medium' }, `${iso}T00:00:00.000Z`);
    const indicators: Indicator[] = [];
    if (used.q !== '') indicators.push({ label: t(locale, 'audit_filters.indicator.q', { value: used.q }), removeUrl: without('q') });
    if (used.actor !== '') indicators.push({ label: t(locale, 'audit_filters.indicator.actor', { value: used.actor }), removeUrl: without('actor') });
    if (used.action !== '') indicators.push({ label: t(locale, 'audit_filters.indicator.action', { value: actionLabel(locale, used.action) }), removeUrl: without('action') });
    if (used.from !== '') indicators.push({ label: t(locale, 'audit_filters.indicator.from', { date: day(used.from) }), removeUrl: without('from') });
    if (used.until !== '') indicators.push({ label: t(locale, 'audit_filters.indicator.until', { date: day(used.until) }), removeUrl: without('until') });

    return adminPage(request, reply, 'admin/audit/index', 'audit', {
      title: t(locale, 'admin.nav.audit'),
      result,
      values,
      errors: Object.fromEntries(Object.entries(errors).flatMap(([field, message]) => (message === undefined ? [] : [[field, [translate(locale, message)]]]))),
      groups: actionGroups(locale),
      indicators,
      filtered: isFiltered(query),
      links: tableLinks(PATH, params, { actor: used.actor, action: used.action, from: used.from, until: used.until }),
    });
  });
};
