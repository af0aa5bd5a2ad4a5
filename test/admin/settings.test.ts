// /admin/settings: values typed as text or JSON, the public flag deciding what GET /api/settings
// returns, add and delete (after a confirmation page), inline errors, audit lines.
import assert from 'node:assert/strict';
import { afterEach, beforeEach, describe, it } from 'node:test';
import { buildTestApp, type TestApp } from '../helpers.js';
import type { WebClient } from '../support/client.js';
import { auditRows, fieldError, signedInAdmin } from './support.js';

const publicSettings = async (t: TestApp): Promise<Record<string, unknown>> => {
  const response = await t.app.inject({ method: 'GET', url: '/api/settings', headers: { accept: 'application/json' } });
  assert.equal(response.statusCode, 200);
  return (response.json() as { data: Record<string, unknown> }).data;
};

describe('/admin/settings', () => {
  let t: TestApp;
  let client: WebClient;
  beforeEach(async () => {
    t = await buildTestApp();
    ({ client } = await signedInAdmin(t));
  });
  afterEach(() => t.close());

  it('lists every setting, public and private, with its value', async () => {
    await t.app.services.settings.put('smtp_note', 'internal only', false);
    const response = await client.get('/admin/settings');
    assert.equal(response.statusCode, 200);
    assert.match(response.body, /<code class="setting-key">site_<wbr>name<\/code>/);
    assert.match(response.body, /<code class="setting-key">smtp_<wbr>note<\/code><\/a><\/td>\s*<td class="value-cell" data-label="Value"><code>internal only<\/code>/);
    assert.match(response.body, /<code>\[&quot;en&quot;,&quot;fr&quot;\]<\/code>/);
  });

  const adds = [
    { name: 'text, kept as a string even when it looks like a number', form: { key: 'tagline', type: 'text', value: '15' }, stored: '15' },
    { name: 'a JSON number', form: { key: 'posts_per_page', type: 'json', value: '20' }, stored: 20 },
    { name: 'a JSON list', form: { key: 'featured', type: 'json', value: '["a", "b"]' }, stored: ['a', 'b'] },
    { name: 'a JSON object', form: { key: 'theme.colors', type: 'json', value: '{"accent": "#3a4bd8"}' }, stored: { accent: '#3a4bd8' } },
    { name: 'JSON true', form: { key: 'maintenance', type: 'json', value: 'true' }, stored: true },
    { name: 'an empty text', form: { key: 'empty-note', type: 'text', value: '' }, stored: '' },
  ];
  for (const row of adds) {
    it(`adds a public setting with ${row.name}, which GET /api/settings then returns`, async () => {
      const response = await client.submit('/admin/settings/new', '/admin/settings', { ...row.form, is_public: '1' });
      assert.equal(response.statusCode, 303);
      assert.equal(response.headers.location, '/admin/settings');
      assert.deepEqual((await publicSettings(t))[row.form.key], row.stored);
      const [line] = await auditRows(t);
      assert.deepEqual([line?.action, line?.subject_label], ['setting.created', row.form.key]);
    });
  }

  it('adds a private setting that GET /api/settings never returns', async () => {
    await client.submit('/admin/settings/new', '/admin/settings', { key: 'api_secret_hint', type: 'text', value: 'hidden' });
    assert.ok(!('api_secret_hint' in (await publicSettings(t))));
    assert.equal((await t.app.services.admin.findSetting('api_secret_hint'))?.is_public, 0);
  });

  const invalid = [
    { name: 'no key', form: { key: '', type: 'text', value: 'x' }, field: 'key', message: 'The key field is required.' },
    { name: 'a key with spaces', form: { key: 'site name', type: 'text', value: 'x' }, field: 'key', message: 'The key field format is invalid.' },
    { name: 'a key starting with a digit', form: { key: '1st', type: 'text', value: 'x' }, field: 'key', message: 'The key field format is invalid.' },
    { name: 'a key that exists', form: { key: 'site_name', type: 'text', value: 'x' }, field: 'key', message: 'A setting with this key already exists.' },
    { name: 'a key over 100 characters', form: { key: `k${'x'.repeat(100)}`, type: 'text', value: 'x' }, field: 'key', message: 'The key field must not be greater than 100 characters.' },
    { name: 'JSON that does not parse', form: { key: 'broken', type: 'json', value: '{nope' }, field: 'value', message: 'The value is not valid JSON.' },
    { name: 'an unknown type', form: { key: 'typed', type: 'yaml', value: 'x' }, field: 'type', message: 'The selected type is invalid.' },
    { name: 'no value field', form: { key: 'novalue', type: 'text' }, field: 'value', message: 'The value field is required.' },
  ];
  for (const row of invalid) {
    it(`refuses to add a setting with ${row.name}: 422, inline error, nothing written`, async () => {
      const before = await t.app.services.settings.all();
      const response = await client.submit('/admin/settings/new', '/admin/settings', row.form);
      assert.equal(response.statusCode, 422);
      assert.equal(fieldError(response.body, row.field), row.message);
      assert.deepEqual(await t.app.services.settings.all(), before);
      assert.equal((await auditRows(t)).filter((line) => line.action.startsWith('setting.')).length, 0);
    });
  }

  it('shows every error of the form at once', async () => {
    const response = await client.submit('/admin/settings/new', '/admin/settings', { key: 'Bad Key', type: 'json', value: '{nope' });
    assert.equal(response.statusCode, 422);
    assert.equal(fieldError(response.body, 'key'), 'The key field format is invalid.');
    assert.equal(fieldError(response.body, 'value'), 'The value is not valid JSON.');
  });

  it('shows a string setting as text and any other as indented JSON in its form', async () => {
    const text = await client.get('/admin/settings/site_name/edit');
    assert.match(text.body, /<option value="text" selected>/);
    assert.match(text.body, />Tessera<\/textarea>/);
    const json = await client.get('/admin/settings/locales/edit');
    assert.match(json.body, /<option value="json" selected>/);
    assert.match(json.body, />\[\n {2}&quot;en&quot;,\n {2}&quot;fr&quot;\n\]<\/textarea>/);
  });

  it('edits a value, and GET /api/settings returns the new one; the audit line names the field', async () => {
    const response = await client.submit('/admin/settings/site_name/edit', '/admin/settings/site_name', { type: 'text', value: 'Tessera Weekly', is_public: '1' });
    assert.equal(response.statusCode, 303);
    assert.equal((await publicSettings(t)).site_name, 'Tessera Weekly');
    const [line] = await auditRows(t);
    assert.deepEqual([line?.action, JSON.parse(line?.details ?? '{}')], ['setting.updated', { fields: ['value'] }]);
    assert.ok(!line?.details.includes('Tessera Weekly'), 'the audit line does not copy values');
  });

  it('makes a public setting private: GET /api/settings stops returning it', async () => {
    await client.submit('/admin/settings/site_description/edit', '/admin/settings/site_description', { type: 'text', value: 'Accounts, tokens and posts.' });
    assert.ok(!('site_description' in (await publicSettings(t))));
    const [line] = await auditRows(t);
    assert.deepEqual(JSON.parse(line?.details ?? '{}'), { fields: ['is_public'] });
  });

  it('makes a private setting public: GET /api/settings starts returning it', async () => {
    await t.app.services.settings.put('contact_email', 'editors@example.com', false);
    await client.submit('/admin/settings/contact_email/edit', '/admin/settings/contact_email', { type: 'text', value: 'editors@example.com', is_public: '1' });
    assert.equal((await publicSettings(t)).contact_email, 'editors@example.com');
  });

  it('writes no audit line when nothing changed', async () => {
    const before = (await auditRows(t)).length;
    const response = await client.submit('/admin/settings/locales/edit', '/admin/settings/locales', { type: 'json', value: '["en","fr"]', is_public: '1' });
    assert.equal(response.statusCode, 303);
    assert.equal((await auditRows(t)).length, before);
  });

  it('refuses an edit with JSON that does not parse, keeping the stored value', async () => {
    const response = await client.submit('/admin/settings/locales/edit', '/admin/settings/locales', { type: 'json', value: '[en, fr', is_public: '1' });
    assert.equal(response.statusCode, 422);
    assert.equal(fieldError(response.body, 'value'), 'The value is not valid JSON.');
    assert.match(response.body, />\[en, fr<\/textarea>/, 'what was typed stays in the form');
    assert.deepEqual((await publicSettings(t)).locales, ['en', 'fr']);
  });

  it('deletes a setting after a confirmation page, and GET /api/settings stops returning it', async () => {
    const confirm = await client.get('/admin/settings/default_locale/delete');
    assert.equal(confirm.statusCode, 200);
    assert.match(confirm.body, /no longer be returned by GET \/api\/settings/);
    assert.ok('default_locale' in (await publicSettings(t)), 'the confirmation page deletes nothing');
    const response = await client.post('/admin/settings/default_locale/delete');
    assert.equal(response.statusCode, 303);
    assert.ok(!('default_locale' in (await publicSettings(t))));
    const [line] = await auditRows(t);
    assert.deepEqual([line?.action, line?.subject_label], ['setting.deleted', 'default_locale']);
  });

  it('answers 404 for a setting that does not exist', async () => {
    for (const url of ['/admin/settings/nope/edit', '/admin/settings/nope/delete', '/admin/settings/..%2Fx/edit']) assert.equal((await client.get(url)).statusCode, 404, url);
    await client.get('/admin/settings');
    assert.equal((await client.post('/admin/settings/nope', { type: 'text', value: 'x' })).statusCode, 404);
  });
});
