// Every write the API offers that changes what the panel also changes leaves, when an
// administrator makes it, the panel's own audit line (written by the same domain call), naming
// the actor and saying it came through the API with which token; the panel's audit page shows
// it and finds it with its filters. The post writes are test/api/posts-audit.test.ts; here the
// account's name and password and the token revocations, the token issue, and the same calls by
// a member (no line, as on the site's pages) or refused (no line).
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { bearer, buildTestApp, createUser, type TestApp } from '../helpers.js';
import { auditRows, signedInAdmin } from '../admin/support.js';
import { splitToken } from './support.js';
import { characters } from '../support/client.js';

const PASSWORD = 'correct horse battery staple';
const IP = '198.51.100.23';

describe('audit lines of the account and token writes through the API', () => {
  let t: TestApp;

  before(async () => {
    t = await buildTestApp();
  });
  after(() => t.close());

  const send = (token: string, method: 'POST' | 'PUT' | 'DELETE', url: string, payload?: object) =>
    t.app.inject({ method, url, payload, headers: bearer(token), remoteAddress: IP });
  const newAdmin = async (name: string) => {
    const admin = await createUser(t.app, { name, password: PASSWORD, admin: true });
    const token = (await t.app.services.tokens.issue(admin.id, `${name}'s laptop`, ['*'])).plaintext;
    return { admin, token, tokenId: splitToken(token).id };
  };
  const linesOf = async (userId: number) => (await auditRows(t)).filter((row) => row.user_id === userId);
  const details = (row: { details: string }) => JSON.parse(row.details) as Record<string, unknown>;

  it('PUT /api/user: a new name leaves user.updated naming the field, by the administrator, through the token', async () => {
    const { admin, token, tokenId } = await newAdmin('Renamed Admin');
    const response = await send(token, 'PUT', '/api/user', { name: 'Ada Renamed' });
    assert.equal(response.statusCode, 200, response.body);
    const [line, ...rest] = await linesOf(admin.id);
    assert.equal(rest.length, 0);
    assert.equal(line?.action, 'user.updated');
    assert.equal(line.subject_type, 'user');
    assert.equal(line.subject_id, String(admin.id));
    assert.equal(line.subject_label, admin.email);
    assert.equal(line.actor_email, admin.email);
    assert.equal(line.ip, IP);
    assert.deepEqual(details(line), { fields: ['name'], via: 'api', token: tokenId });

    // The same name again changes nothing and leaves nothing.
    assert.equal((await send(token, 'PUT', '/api/user', { name: 'Ada Renamed' })).statusCode, 200);
    // An email change only starts (a link to the new address): the account is unchanged, no line yet.
    const started = await send(token, 'PUT', '/api/user', { email: 'ada.new@example.com', current_password: PASSWORD });
    assert.equal(started.statusCode, 202, started.body);
    // A refused change leaves none either.
    assert.equal((await send(token, 'PUT', '/api/user', { name: 'Other', email: 'x@example.com', current_password: 'wrong password' })).statusCode, 422);
    assert.equal((await linesOf(admin.id)).length, 1);
  });

  it('PUT /api/user/password: leaves user.updated naming the password, never its value', async () => {
    const { admin, token, tokenId } = await newAdmin('Password Admin');
    const next = 'a brand new passphrase 2026';
    assert.equal((await send(token, 'PUT', '/api/user/password', { current_password: 'wrong password', password: next, password_confirmation: next })).statusCode, 422);
    assert.equal((await linesOf(admin.id)).length, 0, 'a refused change leaves no line');
    const response = await send(token, 'PUT', '/api/user/password', { current_password: PASSWORD, password: next, password_confirmation: next });
    assert.equal(response.statusCode, 204, response.body);
    const [line] = await linesOf(admin.id);
    assert.equal(line?.action, 'user.updated');
    assert.deepEqual(details(line), { fields: ['password'], via: 'api', token: tokenId });
    for (const row of await auditRows(t)) assert.ok(!JSON.stringify(row).includes(next) && !JSON.stringify(row).includes(PASSWORD));
  });

  it('DELETE /api/tokens/current: leaves token.revoked naming the token and its owner', async () => {
    const { admin, token, tokenId } = await newAdmin('Revoking Admin');
    assert.equal((await send(token, 'DELETE', '/api/tokens/current')).statusCode, 204);
    assert.equal((await send(token, 'DELETE', '/api/tokens/current')).statusCode, 401, 'the token is gone');
    const [line, ...rest] = await linesOf(admin.id);
    assert.equal(rest.length, 0);
    assert.equal(line?.action, 'token.revoked');
    assert.equal(line.subject_type, 'token');
    assert.equal(line.subject_id, String(tokenId));
    assert.equal(line.subject_label, `Revoking Admin's laptop (${admin.email})`);
    assert.deepEqual(details(line), { via: 'api', token: tokenId });
    const secret = splitToken(token).secret;
    for (const row of await auditRows(t)) assert.ok(!JSON.stringify(row).includes(secret));
  });

  it('DELETE /api/tokens: leaves tokens.revoked_all with the count', async () => {
    const { admin, token, tokenId } = await newAdmin('Sweeping Admin');
    await t.app.services.tokens.issue(admin.id, 'phone', ['posts:read']);
    await t.app.services.tokens.issue(admin.id, 'ci', ['posts:write']);
    assert.equal((await send(token, 'DELETE', '/api/tokens')).statusCode, 204);
    const [line] = await linesOf(admin.id);
    assert.equal(line?.action, 'tokens.revoked_all');
    assert.equal(line.subject_label, admin.email);
    assert.deepEqual(details(line), { count: 3, via: 'api', token: tokenId });
  });

  it('POST /api/tokens: the issue leaves auth.token_issued with the sign-in method', async () => {
    const admin = await createUser(t.app, { name: 'Issuing Admin', password: PASSWORD, admin: true });
    const response = await t.app.inject({ method: 'POST', url: '/api/tokens', payload: { email: admin.email, password: PASSWORD, device_name: 'deploy bot' }, headers: { accept: 'application/json' }, remoteAddress: IP });
    assert.equal(response.statusCode, 200, response.body);
    const [line] = await linesOf(admin.id);
    assert.equal(line?.action, 'auth.token_issued');
    assert.equal(line.subject_id, String(splitToken((response.json() as { token: string }).token).id));
    assert.equal(line.subject_label, 'deploy bot');
    assert.deepEqual(details(line), { method: 'password' });
    assert.equal(line.ip, IP);
  });

  it("leaves no line for a member's own changes, as the site's pages leave none", async () => {
    const member = await createUser(t.app, { name: 'Plain Member', password: PASSWORD });
    const token = (await t.app.services.tokens.issue(member.id, 'script', ['*'])).plaintext;
    const other = (await t.app.services.tokens.issue(member.id, 'other', ['*'])).plaintext;
    const next = 'a brand new passphrase 2026';
    assert.equal((await send(other, 'DELETE', '/api/tokens/current')).statusCode, 204);
    assert.equal((await send(token, 'PUT', '/api/user', { name: 'Member Renamed' })).statusCode, 200);
    assert.equal((await send(token, 'PUT', '/api/user/password', { current_password: PASSWORD, password: next, password_confirmation: next })).statusCode, 204);
    await t.app.services.tokens.issue(member.id, 'third', ['*']);
    assert.equal((await send(token, 'DELETE', '/api/tokens')).statusCode, 204);
    assert.deepEqual(await t.db.kysely.selectFrom('personal_access_tokens').select('id').where('user_id', '=', member.id).execute(), [], 'the calls did their work');
    assert.deepEqual(await linesOf(member.id), []);
  });

  it('shows the lines on the audit page, marked as coming through the API, and finds them with the filters', async () => {
    const { admin, token, tokenId } = await newAdmin('Visible Admin');
    assert.equal((await send(token, 'PUT', '/api/user', { name: 'Visible Admin Renamed' })).statusCode, 200);
    const { client } = await signedInAdmin(t);
    const page = await client.get(`/admin/audit?actor=${encodeURIComponent(admin.email)}&action=user.updated`);
    assert.equal(page.statusCode, 200);
    assert.match(page.body, /Page 1 of 1 · 1 in all/);
    assert.match(characters(page.body), new RegExp(`updated the user ${admin.email.replace(/[.]/g, '\\.')} <span class="muted">— changed: name</span> <span class="muted">— through the API, token #${tokenId}</span>`));
  });
});
