// The statements the service keeps prepared on SQLite write their values `+?`, never a bare `?`
// (perf/statement-cache.ts, KeptPlanSqliteDialect): SQLite lets a bare parameter's value shape
// the plan (a LIMIT, an equality the index does not use) and then prepares the statement again
// at each run, since better-sqlite3 clears the bindings after every run. Every statement prepared
// while pages, the panel's lists and the API are served is checked, statement() reads included.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { bearer, buildTestApp, createUser, issueToken, onPostgres, type TestApp } from '../helpers.js';
import { WebClient } from '../support/client.js';

/** The SQL without its string literals and quoted names, where a `?` would be text, not a parameter. */
const code = (sql: string): string => sql.replace(/'(?:[^']|'')*'|"(?:[^"]|"")*"/g, '');

describe('kept SQLite statements', { skip: onPostgres && 'SQLite only' }, () => {
  let t: TestApp;
  const prepared: string[] = [];

  before(async () => {
    t = await buildTestApp();
    // Both the statement cache (Kysely's queries) and statement() prepare through this handle.
    const handle = t.db.sqlite!;
    const prepare = handle.prepare.bind(handle);
    handle.prepare = ((source: string) => {
      prepared.push(source);
      return prepare(source);
    }) as typeof handle.prepare;
  });
  after(() => t.close());

  it('bind every value as +?, on the pages, the panel and the API', async () => {
    const user = await createUser(t.app, { email: 'kept-plans@example.com', admin: true });
    const author = await t.app.services.users.findById(user.id);
    for (let i = 0; i < 3; i += 1) await t.app.services.posts.create(author!.id, { title: `Kept plan ${i}`, locale: 'en', status: 'published' });
    const site = new WebClient(t.app);
    await site.submit('/login', '/login', { email: user.email, password: user.plainPassword });
    for (const path of ['/dashboard', '/security', '/user/api-tokens', '/blog', '/']) assert.equal((await site.get(path)).statusCode, 200, path);
    const panel = new WebClient(t.app);
    await panel.adminLogin(user.email, user.plainPassword);
    for (const path of ['/admin/posts?q=plan&page=1', '/admin/users?q=kept', '/admin/audit']) assert.equal((await panel.get(path)).statusCode, 200, path);
    const token = await issueToken(t.app, user.email, user.plainPassword);
    assert.equal((await t.app.inject({ method: 'GET', url: '/api/user', headers: bearer(token) })).statusCode, 200);
    assert.equal((await t.app.inject({ method: 'GET', url: '/api/posts?per_page=2&page=2', headers: bearer(token) })).statusCode, 200);

    // The reads that were prepared again at every run before: a LIMIT, and an equality on a
    // column the plan may not use (the passkeys and the sessions of a user).
    const withValues = prepared.filter((sql) => code(sql).includes('?'));
    assert.ok(withValues.some((sql) => /\blimit \+\?/i.test(sql)), 'a paged read was prepared');
    assert.ok(withValues.some((sql) => /from "passkeys" where "user_id" = \+\?/.test(sql)), 'the passkeys read was prepared');
    assert.ok(withValues.some((sql) => /from "sessions" where "user_id" = \+\?/.test(sql)), 'the sessions read was prepared');
    assert.deepEqual(withValues.filter((sql) => /(^|[^+])\?/.test(code(sql))), []);
  });
});
