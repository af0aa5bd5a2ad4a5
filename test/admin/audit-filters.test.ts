// /admin/audit as Filament's filtered tables: search, actor, action and a range of days in the
// query string (a filtered page can be bookmarked), the pages keeping the filters, a page past
// the end showing the last, an empty result saying so, and a value that cannot be used never
// failing the page: it is left out, with a message beside its field.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { insertAuditLog } from '../../src/modules/audit/audit.repository.js';
import { AUDIT_ACTIONS } from '../../src/modules/audit/audit.service.js';
import { buildTestApp, onPostgres, type TestApp } from '../helpers.js';
import type { WebClient } from '../support/client.js';
import { planOf, queriesDuring } from '../support/query-plan.js';
import { decode, fieldError, signedInAdmin } from './support.js';
import { characters } from '../support/client.js';

type Line = { actor: [string, string]; action: string; label: string; at: string; ip?: string };

// The log the filters are tried on: three actors over three days (UTC), a line at each edge of a day.
const LINES: Line[] = [
  { actor: ['Grace Hopper', 'grace@example.com'], action: 'post.created', label: 'Compilers at sea', at: '2026-11-24T00:00:00.000Z', ip: '203.0.113.7' },
  { actor: ['Grace Hopper', 'grace@example.com'], action: 'post.published', label: 'Compilers at sea', at: '2026-11-24T23:59:59.999Z' },
  { actor: ['Linus Editor', 'linus@example.org'], action: 'post.updated', label: 'Kernel notes', at: '2026-11-25T12:00:00.000Z' },
  { actor: ['Linus Editor', 'linus@example.org'], action: 'setting.updated', label: 'site_name', at: '2026-11-25T13:00:00.000Z' },
  { actor: ['command line', 'root'], action: 'admin.created', label: 'grace@example.com', at: '2026-11-26T00:00:00.000Z' },
  { actor: ['Grace Hopper', 'grace@example.com'], action: 'post.deleted', label: 'Discount 100% off', at: '2026-11-26T08:30:00.000Z' },
];

/** The subjects of the lines a page shows, in order (each line's sentence quotes or names its subject). */
function subjects(html: string): string[] {
  const list = html.slice(html.indexOf('<ol class="audit-list">'), html.indexOf('</ol>'));
  return [...list.matchAll(/<span class="audit-text">[\s\S]*?<\/li>/g)].map((m) => {
    const text = decode(m[0].replace(/<[^>]+>/g, ' ').replace(/\s+/g, ' '));
    return LINES.find((line) => text.includes(line.label) && text.includes(line.actor[0]))?.label ?? text;
  });
}

describe('the audit log filters', () => {
  let t: TestApp;
  let client: WebClient;

  before(async () => {
    t = await buildTestApp();
    ({ client } = await signedInAdmin(t, { name: 'Filter Keeper' }));
    // The sign-in lines of the test's own administrator are today's: the log here ends in 2026-11-26.
    await t.db.kysely.deleteFrom('audit_logs').execute();
    for (const line of LINES) {
      await insertAuditLog(t.db.kysely, {
        user_id: null,
        actor_name: line.actor[0],
        actor_email: line.actor[1],
        action: line.action,
        subject_type: line.action.split('.')[0]!,
        subject_id: null,
        subject_label: line.label,
        details: '{}',
        ip: line.ip ?? null,
        created_at: line.at,
      });
    }
  });
  after(() => t.close());

  const page = async (query: string, headers: Record<string, string> = {}) => {
    const response = await client.get(`/admin/audit${query}`, headers);
    assert.equal(response.statusCode, 200, `${query}: ${response.body.slice(0, 300)}`);
    return response.body;
  };

  it('narrows the log by each filter, and by several at once', async () => {
    const cases: [string, string[]][] = [
      ['', ['Discount 100% off', 'grace@example.com', 'site_name', 'Kernel notes', 'Compilers at sea', 'Compilers at sea']],
      // The actor by name or by email, any part of it, whatever the case.
      ['?actor=grace+HOPPER', ['Discount 100% off', 'Compilers at sea', 'Compilers at sea']],
      ['?actor=example.org', ['site_name', 'Kernel notes']],
      ['?actor=root', ['grace@example.com']],
      ['?action=post.updated', ['Kernel notes']],
      ['?action=setting.updated', ['site_name']],
      // Whole days in UTC, both ends included: the first and the last millisecond of a day.
      ['?from=2026-11-25', ['Discount 100% off', 'grace@example.com', 'site_name', 'Kernel notes']],
      ['?until=2026-11-24', ['Compilers at sea', 'Compilers at sea']],
      ['?from=2026-11-25&until=2026-11-25', ['site_name', 'Kernel notes']],
      ['?from=2026-11-26&until=2026-11-26', ['Discount 100% off', 'grace@example.com']],
      // The search: who (name, email), what it was about, the address.
      ['?q=kernel', ['Kernel notes']],
      ['?q=203.0.113', ['Compilers at sea']],
      ['?q=grace%40example', ['Discount 100% off', 'grace@example.com', 'Compilers at sea', 'Compilers at sea']],
      // LIKE's wildcards are searched for as themselves.
      ['?q=100%25', ['Discount 100% off']],
      ['?q=_', ['site_name']],
      ['?actor=grace&action=post.published&from=2026-11-24&until=2026-11-24', ['Compilers at sea']],
    ];
    for (const [query, expected] of cases) assert.deepEqual(subjects(await page(query)), expected, query);
  });

  it('shows the address a line came from, which the search finds (the dashboard keeps to who and what)', async () => {
    assert.match(characters(await page('?q=203.0.113')), /created the post “Compilers at sea” <span class="muted">— from 203\.0\.113\.7<\/span>/);
    assert.match(characters(await page('?q=203.0.113', { 'accept-language': 'fr' })), /<span class="muted">— depuis l’adresse 203\.0\.113\.7<\/span>/);
    const dashboard = await client.get('/admin');
    assert.match(dashboard.body, /Compilers at sea/);
    assert.doesNotMatch(dashboard.body, /203\.0\.113\.7/);
  });

  it('shows the filters in use back in the form, and as indicators that each remove one filter', async () => {
    const body = await page('?actor=grace&action=post.created&from=2026-11-24&until=2026-11-25&q=sea');
    assert.match(body, /<input id="field-actor" name="actor" type="search" value="grace"/);
    assert.match(body, /<option value="post.created" selected>Post created<\/option>/);
    assert.match(body, /<input id="field-from" name="from" type="date" value="2026-11-24"/);
    assert.match(body, /<input id="field-until" name="until" type="date" value="2026-11-25"/);
    const indicators = [...body.matchAll(/<li class="chip">([^<]*) <a href="([^"]+)"/g)].map((m) => [decode(m[1]!), decode(m[2]!)]);
    // Dates in the site's date format.
    assert.deepEqual(indicators, [
      ['Search: sea', '/admin/audit?actor=grace&action=post.created&from=2026-11-24&until=2026-11-25'],
      ['Actor: grace', '/admin/audit?q=sea&action=post.created&from=2026-11-24&until=2026-11-25'],
      ['Action: Post created', '/admin/audit?q=sea&actor=grace&from=2026-11-24&until=2026-11-25'],
      ['From Nov 24, 2026', '/admin/audit?q=sea&actor=grace&action=post.created&until=2026-11-25'],
      ['Until Nov 25, 2026', '/admin/audit?q=sea&actor=grace&action=post.created&from=2026-11-24'],
    ]);
    const french = await page('?from=2026-11-24&action=post.created', { 'accept-language': 'fr-FR,fr;q=0.9' });
    assert.match(french, /<li class="chip">Du 24 nov\. 2026 <a/);
    assert.match(french, /<li class="chip">Action : Article créé <a/);
    assert.match(characters(french), /a créé l’article « Compilers at sea »/);
    assert.doesNotMatch(await page(''), /class="chip"/, 'no indicator without a filter');
  });

  it('says so when nothing matches, with a way back to the whole log', async () => {
    const body = await page('?actor=nobody-at-all');
    assert.match(body, /<p class="muted" id="audit-empty">No line of the log matches these filters\. <a href="\/admin\/audit">Clear the filters<\/a><\/p>/);
    assert.doesNotMatch(body, /Nothing has been done in the panel yet/);
    assert.match(body, /Page 1 of 1 · 0 in all/);
    assert.match(await page('?actor=nobody-at-all', { 'accept-language': 'fr' }), /Aucune ligne du journal ne correspond à ces filtres\./);
  });

  it('leaves out a value it cannot use, says why beside its field, and never fails', async () => {
    const all = subjects(await page(''));
    const cases: { query: string; field: string | null; message: RegExp | null; shows: string[] }[] = [
      { query: '?action=post.exploded', field: 'action', message: /^“post\.exploded” is not an action of the log, so every action is shown\.$/, shows: all },
      { query: '?action=%3Cscript%3Ealert(1)%3C%2Fscript%3E', field: 'action', message: /^“<script>alert\(1\)<\/script>” is not an action/, shows: all },
      { query: '?from=yesterday', field: 'from', message: /^Enter a date such as 2026-11-26; this one is left out\.$/, shows: all },
      { query: '?until=2026-02-30', field: 'until', message: /^Enter a date such as 2026-11-26/, shows: all },
      { query: '?from=26%2F11%2F2026', field: 'from', message: /^Enter a date such as/, shows: all },
      { query: '?from=0000-01-01', field: 'from', message: /^Enter a date such as/, shows: all },
      { query: '?until=99999-01-01', field: 'until', message: /^Enter a date such as/, shows: all },
      // A reversed range keeps the start and leaves out the end.
      { query: '?from=2026-11-26&until=2026-11-24', field: 'until', message: /^This day comes before the “From” day; it is left out\.$/, shows: ['Discount 100% off', 'grace@example.com'] },
      // The last day a timestamp holds: an end with no day after it is no bound.
      { query: '?until=9999-12-31', field: null, message: null, shows: all },
      // Repeated and odd parameters: the first value counts, unknown ones are ignored.
      { query: '?action=post.updated&action=post.deleted', field: null, message: null, shows: ['Kernel notes'] },
      { query: '?action[]=x&from[a]=1&page=-3&sort=drop+table&dir=sideways&zzz=1', field: null, message: null, shows: all },
      { query: `?q=${'x'.repeat(5000)}&actor=${'y'.repeat(5000)}`, field: null, message: null, shows: [] },
      // A NUL, which PostgreSQL's text cannot hold, and bytes that are no UTF-8.
      { query: '?q=%00&actor=%00', field: null, message: null, shows: all },
      { query: '?q=kern%00el', field: null, message: null, shows: ['Kernel notes'] },
      { query: '?q=%FF%FE&actor=%C3', field: null, message: null, shows: [] },
    ];
    for (const { query, field, message, shows } of cases) {
      const body = await page(query);
      if (field !== null && message !== null) {
        assert.match(fieldError(body, field) ?? '', message, query);
        assert.match(body, new RegExp(`id="field-${field}"[^>]*aria-invalid="true"`), `${query}: the field is marked invalid`);
      } else {
        assert.doesNotMatch(body, /class="field-error"/, query);
      }
      assert.deepEqual(subjects(body), shows, query);
      assert.doesNotMatch(body, /<script>alert/, `${query}: escaped`);
    }
    assert.match(fieldError(await page('?from=hier', { 'accept-language': 'fr' }), 'from') ?? '', /^Saisissez une date comme 2026-11-26/);
  });

  it('keeps the filters in the page links, and shows the last page for a page past the end', async () => {
    for (let i = 0; i < 30; i += 1) {
      await insertAuditLog(t.db.kysely, {
        user_id: null, actor_name: 'Bulk Robot', actor_email: 'robot@example.net', action: 'post.updated', subject_type: 'post', subject_id: null,
        subject_label: `Bulk ${String(i).padStart(2, '0')}`, details: '{"fields":["body"]}', ip: null, created_at: `2026-11-20T10:${String(i).padStart(2, '0')}:00.000Z`,
      });
    }
    const first = await page('?actor=robot&action=post.updated&until=2026-11-20');
    assert.match(first, /Page 1 of 2 · 30 in all/);
    const next = /<a href="([^"]+)" rel="next">/.exec(first)?.[1];
    assert.equal(decode(next ?? ''), '/admin/audit?actor=robot&action=post.updated&until=2026-11-20&sort=created_at&dir=desc&page=2');
    const second = await page(decode(next!).slice('/admin/audit'.length));
    assert.match(second, /Page 2 of 2 · 30 in all/);
    assert.deepEqual(
      [...second.matchAll(/Bulk (\d\d)/g)].map((m) => m[1]),
      ['04', '03', '02', '01', '00'],
    );
    const previous = /<a href="([^"]+)" rel="prev">/.exec(second)?.[1];
    assert.match(decode(previous ?? ''), /actor=robot&action=post\.updated&until=2026-11-20&.*page=1$/);
    // Past the end: the last page, not an empty one.
    const past = await page('?actor=robot&page=99');
    assert.match(past, /Page 2 of 2 · 30 in all/);
    assert.match(past, /Bulk 00/);
  });

  it('offers every action of the log, named in English and in French', async () => {
    const options = (html: string) => [...html.matchAll(/<option value="([a-z_.]+)"[^>]*>([^<]+)<\/option>/g)].map((m) => [m[1], decode(m[2]!)] as const);
    for (const locale of ['en', 'fr']) {
      const listed = options(await page('', { 'accept-language': locale }));
      assert.deepEqual(listed.map(([value]) => value).sort(), [...AUDIT_ACTIONS].sort(), `${locale}: every action once`);
      for (const [value, label] of listed) assert.notEqual(label, value, `${locale}: ${value} has a name`);
    }
  });

  it('counts and lists the lines of an action from its index (2026_11_27_000013), sorting nothing', async () => {
    const queries = (await queriesDuring(t, () => page('?action=post.updated&from=2026-11-20'))).filter((query) => query.sql.includes('from "audit_logs"'));
    assert.equal(queries.length, 2, 'a count and a page');
    for (const query of queries) {
      const plan = (await planOf(t, query)).join('\n');
      assert.match(plan, /audit_logs_action_index/, plan);
      assert.doesNotMatch(plan, onPostgres ? /Sort/ : /TEMP B-TREE/, plan);
    }
  });

  it('is for administrators only', async () => {
    const response = await t.app.inject({ method: 'GET', url: '/admin/audit?actor=grace' });
    assert.equal(response.statusCode, 302);
    assert.equal(response.headers.location, '/admin/login');
  });
});
