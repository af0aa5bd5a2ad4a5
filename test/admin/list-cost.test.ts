// What a page of the panel's tables costs the database: the same statements whatever the number
// of rows (no query per row: the authors, token counts and the CSRF token come with the page),
// and on the tables' default order no sort of the whole table (an index on (column, id) is walked
// and left after the page), so a page of 15 rows costs the same on 1,000 posts as on 100,000.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { buildTestApp, onPostgres, type TestApp } from '../helpers.js';
import type { WebClient } from '../support/client.js';
import { planOf, queriesDuring, statementsDuring } from '../support/query-plan.js';
import { formatWhen } from '../../src/http/admin/support.js';
import { formatDateTime } from '../../src/modules/i18n/formats.js';
import { decode, signedInAdmin, type Admin } from './support.js';

describe('the panel tables cost no more database work per row', () => {
  let t: TestApp;
  let client: WebClient;
  let admin: Admin;
  before(async () => {
    t = await buildTestApp();
    ({ admin, client } = await signedInAdmin(t));
  });
  after(() => t.close());

  /**
   * `measure` after a write that changes nothing a table shows (the admin's name set to itself):
   * the tables' pages are kept in memory while the database is unchanged (perf/kept-reads.ts
   * keptAdminTables), so without it a page asked before would read nothing at all.
   */
  const afresh = async <T>(measure: () => Promise<T>): Promise<T> => {
    await t.db.kysely.updateTable('users').set({ name: admin.name }).where('id', '=', admin.id).execute();
    return measure();
  };

  it('runs the same statements for a page of 1 row and one of 15', async () => {
    const posts = t.app.services.posts;
    await posts.create(admin.id, { title: 'Only post', locale: 'en', status: 'published' });
    for (const path of ['/admin/posts', '/admin/users']) await client.get(path);
    const few = { posts: await afresh(() => statementsDuring(t, () => client.get('/admin/posts'))), users: await afresh(() => statementsDuring(t, () => client.get('/admin/users'))) };
    assert.ok(few.posts.some((text) => /from "posts"/.test(text)) && few.users.some((text) => /from "users"/.test(text)), 'the tables were read');
    for (let i = 0; i < 20; i += 1) {
      await posts.create(admin.id, { title: `Post ${i}`, locale: 'en', status: i % 2 === 0 ? 'published' : 'draft' });
      await t.app.services.users.create({ name: `User ${i}`, email: `user${i}@example.com`, password: 'a long enough password', verified: true, admin: false });
    }
    for (const path of ['/admin/posts', '/admin/users']) {
      const page = await client.get(path);
      assert.equal(page.statusCode, 200);
      assert.equal(page.body.split('<tr>').length - 1, 16, `${path} shows 15 rows`);
    }
    const many = { posts: await afresh(() => statementsDuring(t, () => client.get('/admin/posts'))), users: await afresh(() => statementsDuring(t, () => client.get('/admin/users'))) };
    assert.deepEqual(many.posts, few.posts);
    assert.deepEqual(many.users, few.users);
  });

  for (const path of ['/admin/posts', '/admin/users']) {
    it(`reads ${path} in its default order from an index, sorting nothing`, async () => {
      const queries = await afresh(() => queriesDuring(t, () => client.get(path)));
      const table = path.slice('/admin/'.length);
      const list = queries.find((query) => query.sql.includes(`from "${table}" order by`));
      assert.ok(list !== undefined, `the list query of ${path}`);
      const plan = (await planOf(t, list)).join('\n');
      assert.doesNotMatch(plan, onPostgres ? /Sort/ : /TEMP B-TREE/, plan);
      assert.match(plan, onPostgres ? /Index Scan/ : /USING INDEX/, plan);
    });
  }

  it('counts the posts of every filter without a search from the kept counts, exactly', async () => {
    const expected = async (where: { status?: string; locale?: string }) => {
      let query = t.db.kysely.selectFrom('posts').select((eb) => eb.fn.countAll<number | string>().as('n'));
      if (where.status !== undefined) query = query.where('status', '=', where.status as 'draft');
      if (where.locale !== undefined) query = query.where('locale', '=', where.locale);
      return Number((await query.executeTakeFirstOrThrow()).n);
    };
    await t.app.services.posts.create(admin.id, { title: 'Un billet', locale: 'fr', status: 'archived' });
    const filters: Record<string, string>[] = [{}, { status: 'draft' }, { status: 'published', locale: 'en' }, { locale: 'fr' }, { status: 'archived', locale: 'en' }];
    for (const where of filters) {
      const page = await client.get(`/admin/posts?${new URLSearchParams(where).toString()}`);
      const total = /· (\d+) in all/.exec(page.body)?.[1];
      assert.equal(Number(total), await expected(where), JSON.stringify(where));
      const queries = await afresh(() => statementsDuring(t, () => client.get(`/admin/posts?${new URLSearchParams(where).toString()}`)));
      assert.ok(queries.some((text) => /from "post_counts"/.test(text)), 'the count read from post_counts');
      assert.ok(!queries.some((text) => /count\(\*\)[^]*from "posts"/.test(text)), 'no count over the posts table');
    }
  });

  // One character beyond Latin-1 anywhere in a page (a sort mark, a dash) makes V8 hold the whole
  // page as two-byte text: measuring and encoding 20 KB of it then costs about 30 µs more a request.
  it('writes its tables in Latin-1 text when their data is, marks and dashes as entities', async () => {
    await t.app.services.posts.create(admin.id, { title: 'A draft with no date', locale: 'en', status: 'draft' });
    for (const path of ['/admin/posts', '/admin/posts?sort=updated_at&dir=asc', '/admin/users', '/admin/users?sort=name&dir=asc']) {
      const page = await client.get(path);
      assert.equal(page.statusCode, 200);
      assert.match(page.body, /class="sort-mark" aria-hidden="true"> &#96(50|60);</, path);
      const wide = [...page.body].filter((char) => char.charCodeAt(0) > 0xff);
      assert.deepEqual(wide, [], path);
    }
    assert.match((await client.get('/admin/posts')).body, /<td data-label="Publication date">&mdash;<\/td>/);
  });

  it('gives the forms of a page one CSRF token, which each of them accepts', async () => {
    const page = await client.get('/admin/posts');
    const forms = [...page.body.matchAll(/<form method="post" action="([^"]+)"[^>]*>\s*<input type="hidden" name="_token" value="([^"]+)">/g)];
    assert.ok(forms.some((form) => form[1] === '/admin/logout'), 'the sign-out form');
    assert.ok(forms.length >= 3, 'two row forms at least');
    assert.equal(new Set([...page.body.matchAll(/name="_token" value="([^"]+)"/g)].map((match) => match[1])).size, 1);
    for (const [, action, token] of forms.filter((form) => form[1] !== '/admin/logout').slice(0, 2)) {
      const answer = await client.post(decode(action ?? ''), {}, { token: token ?? '', headers: { referer: 'http://localhost/admin/posts' } });
      assert.equal(answer.statusCode, 303, action);
    }
  });
});

describe('the time of a panel cell', () => {
  const cases: [string, string, string | null | undefined, string][] = [
    ['a stored UTC time, to the minute', 'en', '2026-11-27T06:51:32.123Z', 'Nov 27, 2026, 6:51 AM UTC'],
    ['a stored UTC time in French', 'fr', '2026-11-27T06:51:32.123Z', '27 nov. 2026, 06:51 UTC'],
    ['the start of a year', 'en', '2027-01-01T00:00:00.000Z', 'Jan 1, 2027, 12:00 AM UTC'],
    ['a time with an offset, in UTC', 'en', '2026-11-27T00:30:00+02:00', 'Nov 26, 2026, 10:30 PM UTC'],
    ['a date alone, as midnight UTC', 'fr', '2026-11-27', '27 nov. 2026, 00:00 UTC'],
    ['no time', 'en', null, '—'],
    ['no value', 'en', undefined, '—'],
    ['text that is no time', 'en', 'yesterday', '—'],
  ];
  for (const [name, locale, value, shown] of cases) {
    it(`shows ${name} as "${shown}"`, () => {
      assert.equal(formatWhen(locale, value).replace(/\u00a0/g, ' '), shown);
      // The panel's text is the site's: one format per language (modules/i18n/formats.ts).
      if (shown !== '—') assert.equal(formatWhen(locale, value), formatDateTime(locale, value!));
    });
  }
});
