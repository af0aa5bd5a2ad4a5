// The tokens page's list is kept in memory per user (perf/kept-reads.ts keptTokensOfUser) behind
// the tokens' own counter, and stays exact across instances: a token made, used through the API
// or revoked through one instance shows on the next page of the other. On PostgreSQL a token's
// use moves token_version and not data_version (the other kept reads stay), and the page then
// reads no row: its one round trip is the look at the change counters.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { FastifyInstance } from 'fastify';
import { sql } from 'kysely';
import type { Db } from '../../src/db/connect.js';
import { createUser, twoInstances } from '../helpers.js';
import { WebClient } from '../support/client.js';
import { postgresTraffic } from '../support/query-plan.js';
import { needsPostgres } from '../support/services.js';
import { login, secondInstanceShowing } from './support.js';

/** The row of a token on a tokens page, or undefined. */
const rowOf = (html: string, id: number): string | undefined => html.split('<tr ').find((row) => row.startsWith(`data-token-id="${id}"`));

describe('the tokens page, changed through another instance', () => {
  const kept = secondInstanceShowing('/user/api-tokens', 'kept-tokens@example.com');

  it('shows a token made here, its first use through the API and its revocation on the next page there', async () => {
    const { a, user, page } = kept;
    const token = await a.services.tokens.issue(user.id, 'kept-laptop');
    const made = rowOf(await page(), token.id) ?? '';
    assert.match(made, /kept-laptop/, 'the new token is listed');
    assert.match(made, /data-label="Last used"><span class="muted">Never</);
    const used = await a.inject({ method: 'GET', url: '/api/user', headers: { authorization: `Bearer ${token.plaintext}`, accept: 'application/json' } });
    assert.equal(used.statusCode, 200);
    assert.match(rowOf(await page(), token.id) ?? '', /data-label="Last used"><time datetime="[^"]+">/, 'its last use is shown');
    await a.services.tokens.revoke(token.id);
    assert.equal(rowOf(await page(), token.id), undefined);
  });
});

describe('the tokens page on PostgreSQL', { skip: needsPostgres }, () => {
  let a: FastifyInstance;
  let close: () => Promise<void>;

  before(async () => {
    ({ a, close } = await twoInstances());
  });
  after(() => close());

  const counter = async (db: Db, table: 'data_version' | 'token_version') => Number((await sql<{ n: string }>`select n from ${sql.table(table)} where id = 1`.execute(db.kysely)).rows[0]?.n);

  it("moves token_version with a token's use, and not data_version", async () => {
    const user = await createUser(a, { email: 'kept-tokens-counter@example.com' });
    const token = await a.services.tokens.issue(user.id, 'counted');
    const [data, tokens] = [await counter(a.db, 'data_version'), await counter(a.db, 'token_version')];
    await a.db.kysely.updateTable('personal_access_tokens').set({ last_used_at: new Date().toISOString() }).where('id', '=', token.id).execute();
    assert.equal(await counter(a.db, 'token_version'), tokens + 1);
    assert.equal(await counter(a.db, 'data_version'), data);
  });

  it('reads no row of its own the second time: its one round trip is the look at the change counters', async () => {
    const user = await createUser(a, { email: 'kept-tokens-looks@example.com' });
    await a.services.tokens.issue(user.id, 'looked');
    const client = new WebClient(a);
    await login(client, user.email, user.plainPassword);
    // The first page after the sign-in saves the session once more (what the sign-in flashed is taken).
    assert.equal((await client.get('/user/api-tokens')).statusCode, 200);
    assert.equal((await client.get('/user/api-tokens')).statusCode, 200);
    let body = '';
    const { sent, acquired } = await postgresTraffic(a.db, async () => (body = (await client.get('/user/api-tokens')).body));
    assert.match(body, />looked</);
    assert.deepEqual(sent, ['data_version'], 'nothing but the look reached the database');
    assert.equal(acquired, 0, 'no client was taken from the pool');
  });
});
