// /admin/settings: "Site", a form of named, typed fields (each with its help text and inline
// error, nothing written on an error), whose settings cannot be deleted; "Advanced", the custom
// settings typed as text or JSON, public or private, added, edited and deleted. Every change
// leaves one audit line per setting, naming it and never its value.
import assert from 'node:assert/strict';
import { afterEach, beforeEach, describe, it } from 'node:test';
import { buildTestApp, type TestApp } from '../helpers.js';
import type { WebClient } from '../support/client.js';
import { auditRows, fieldError, signedInAdmin, siteForm, type SiteFormChanges } from './support.js';

const publicSettings = async (t: TestApp): Promise<Record<string, unknown>> => {
  const response = await t.app.inject({ method: 'GET', url: '/api/settings', headers: { accept: 'application/json' } });
  assert.equal(response.statusCode, 200);
  return (response.json() as { data: Record<string, unknown> }).data;
};

const settingLines = async (t: TestApp) => (await auditRows(t)).filter((line) => line.action.startsWith('setting.'));
const hintOf = (html: string, field: string) => new RegExp(`id="field-${field}-hint">([^<]*)<`).exec(html)?.[1] ?? null;

describe('/admin/settings', () => {
  let t: TestApp;
  let client: WebClient;
  beforeEach(async () => {
    t = await buildTestApp();
    ({ client } = await signedInAdmin(t));
  });
  afterEach(() => t.close());

  describe('the site form', () => {

    it('shows each named field with its value and its help text, and no site setting among the custom ones', async () => {
      await t.app.services.settings.put('contact_email', 'editors@example.com', false);
      const page = await client.get('/admin/settings');
      assert.equal(page.statusCode, 200);
      const html = page.body;
      assert.match(html, /<input id="field-site_name" name="site_name" type="text" value="Tessera"/);
      assert.match(html, /<textarea id="field-site_description" name="site_description"[^>]*>Accounts, tokens and posts.<\/textarea>/);
      assert.match(html, /<input id="field-home_headline" name="home_headline" type="text" value=""/);
      assert.match(html, /<input id="field-home_api_card" name="home_api_card" type="checkbox" value="1" checked/);
      assert.match(html, /<option value="en" selected>English<\/option>/);
      assert.match(html, /<input id="field-locales-en" name="locales" type="checkbox" value="en" checked>/);
      assert.match(html, /<input id="field-locales-fr" name="locales" type="checkbox" value="fr" checked>/);
      assert.match(html, /<input id="field-posts_per_page" name="posts_per_page" type="number" value="15"/);
      for (const name of ['site_name', 'site_description', 'home_headline', 'home_intro', 'home_api_card', 'default_locale', 'locales', 'posts_per_page']) {
        assert.ok((hintOf(html, name) ?? '').length > 10, `${name} has its help text`);
      }
      const advanced = html.slice(html.indexOf('id="settings-advanced-title"'));
      assert.match(advanced, /<code class="setting-key">contact_<wbr>email<\/code>/);
      assert.doesNotMatch(advanced, /site_<wbr>name|posts_<wbr>per_<wbr>page|default_<wbr>locale|>locales</, 'the site settings are not custom ones');
    });

    it('saves every field with its type: GET /api/settings returns a number, a boolean and a list', async () => {
      await client.get('/admin/settings');
      const response = await client.post(
        '/admin/settings/site',
        siteForm({ site_name: '  Les Carnets ', site_description: 'Notes de voyage.', home_headline: 'Bienvenue', home_intro: 'Des carnets, chaque semaine.', home_api_card: undefined, default_locale: 'fr', locales: ['fr'], posts_per_page: '10' }),
      );
      assert.equal(response.statusCode, 303, response.body);
      assert.equal(response.headers.location, '/admin/settings');
      const data = await publicSettings(t);
      assert.deepEqual(
        {
          site_name: data.site_name,
          site_description: data.site_description,
          home_headline: data.home_headline,
          home_intro: data.home_intro,
          home_api_card: data.home_api_card,
          default_locale: data.default_locale,
          locales: data.locales,
          posts_per_page: data.posts_per_page,
        },
        { site_name: 'Les Carnets', site_description: 'Notes de voyage.', home_headline: 'Bienvenue', home_intro: 'Des carnets, chaque semaine.', home_api_card: false, default_locale: 'fr', locales: ['fr'], posts_per_page: 10 },
      );
      const page = await client.get('/admin/settings');
      assert.match(page.body, /The site settings were saved\./);
      assert.match(page.body, /name="posts_per_page" type="number" value="10"/);
      assert.match(page.body, /name="home_api_card" type="checkbox" value="1" aria-describedby/, 'the card is off');
    });

    it('writes one audit line per changed setting, naming it and never its value', async () => {
      await client.get('/admin/settings');
      await client.post('/admin/settings/site', siteForm({ site_name: 'Renamed Weekly', posts_per_page: '12' }));
      const lines = await settingLines(t);
      assert.deepEqual(lines.map((line) => [line.action, line.subject_label, JSON.parse(line.details) as unknown]).sort(), [
        ['setting.updated', 'posts_per_page', { fields: ['value'] }],
        ['setting.updated', 'site_name', { fields: ['value'] }],
      ]);
      // Every column but the time (whose seconds may well be :12) holds no value.
      for (const { created_at: _time, ...line } of lines) assert.doesNotMatch(JSON.stringify(line), /Renamed Weekly|"12"|:12/);
      const audit = await client.get('/admin/audit');
      assert.match(audit.body, /changed the setting site_name/);
    });

    it('writes nothing, nor an audit line, when the form is saved unchanged', async () => {
      await client.get('/admin/settings');
      const before = await t.app.services.settings.all();
      const response = await client.post('/admin/settings/site', siteForm());
      assert.equal(response.statusCode, 303);
      assert.deepEqual(await t.app.services.settings.all(), before);
      assert.equal((await settingLines(t)).length, 0);
    });

    const refused = [
      { name: 'posts per page 0', form: { posts_per_page: '0' }, field: 'posts_per_page', message: 'The posts per page must be a whole number from 1 to 100.' },
      { name: 'posts per page "abc"', form: { posts_per_page: 'abc' }, field: 'posts_per_page', message: 'The posts per page must be a whole number from 1 to 100.' },
      { name: 'posts per page 101', form: { posts_per_page: '101' }, field: 'posts_per_page', message: 'The posts per page must be a whole number from 1 to 100.' },
      { name: 'posts per page 2.5', form: { posts_per_page: '2.5' }, field: 'posts_per_page', message: 'The posts per page must be a whole number from 1 to 100.' },
      { name: 'no posts per page', form: { posts_per_page: '' }, field: 'posts_per_page', message: 'The posts per page must be a whole number from 1 to 100.' },
      { name: 'an empty site name', form: { site_name: '   ' }, field: 'site_name', message: 'The site name field is required.' },
      { name: 'a site name of 101 characters', form: { site_name: 'x'.repeat(101) }, field: 'site_name', message: 'The site name field must not be greater than 100 characters.' },
      { name: 'an introduction of 601 characters', form: { home_intro: 'x'.repeat(601) }, field: 'home_intro', message: 'The introduction field must not be greater than 600 characters.' },
      { name: 'a default language without translations', form: { default_locale: 'de' }, field: 'default_locale', message: 'The selected default language is invalid.' },
      { name: 'no offered language', form: { locales: [] }, field: 'locales', message: 'Choose at least one language.' },
      { name: 'an offered language without translations', form: { locales: ['en', 'de'] }, field: 'locales', message: 'The selected offered languages is invalid.' },
      { name: 'a default language not offered', form: { default_locale: 'fr', locales: ['en'] }, field: 'default_locale', message: 'The default language must be one of the offered languages.' },
    ];
    for (const row of refused) {
      it(`refuses ${row.name}: 422, the inline error, nothing changed`, async () => {
        await client.get('/admin/settings');
        const before = await t.app.services.settings.all();
        const response = await client.post('/admin/settings/site', siteForm(row.form as SiteFormChanges));
        assert.equal(response.statusCode, 422);
        assert.equal(fieldError(response.body, row.field), row.message);
        assert.match(response.body, new RegExp(`id="field-${row.field}(-[a-z]+)?"[^>]*aria-invalid="true"|aria-describedby="field-${row.field}-hint field-${row.field}-error"`));
        assert.deepEqual(await t.app.services.settings.all(), before);
        assert.equal((await settingLines(t)).length, 0);
        assert.equal((await publicSettings(t)).posts_per_page, 15);
      });
    }

    it('shows every error at once, keeps what was typed, and speaks French to a French administrator', async () => {
      await client.get('/locale/fr');
      await client.get('/admin/settings');
      const response = await client.post('/admin/settings/site', siteForm({ site_name: '', posts_per_page: 'abc', home_headline: 'Gardé <b>tel quel</b>', locales: [] }));
      assert.equal(response.statusCode, 422);
      assert.equal(fieldError(response.body, 'site_name'), 'Le champ nom du site est obligatoire.');
      assert.equal(fieldError(response.body, 'posts_per_page'), 'Le nombre d’articles par page doit être un nombre entier de 1 à 100.');
      assert.equal(fieldError(response.body, 'locales'), 'Choisissez au moins une langue.');
      assert.match(response.body, /name="home_headline" type="text" value="Gardé &lt;b&gt;tel quel&lt;\/b&gt;"/);
      assert.match(response.body, /name="posts_per_page" type="number" value="abc"/);
    });

    it('keeps an offered language the interface does not speak (it cannot be ticked) when saving', async () => {
      await t.app.services.settings.put('locales', ['en', 'fr', 'de'], true);
      await client.get('/admin/settings');
      await client.post('/admin/settings/site', siteForm({ locales: ['en'] }));
      assert.deepEqual((await publicSettings(t)).locales, ['en', 'de']);
    });

    it('never deletes a setting the site needs: not from the panel, not through the service', async () => {
      for (const key of ['site_name', 'default_locale', 'locales', 'posts_per_page']) {
        assert.equal((await client.get(`/admin/settings/${key}/delete`)).statusCode, 404, key);
        assert.equal((await client.get(`/admin/settings/${key}/edit`)).statusCode, 404, key);
      }
      await client.get('/admin/settings');
      assert.equal((await client.post('/admin/settings/site_name/delete')).statusCode, 404);
      assert.equal((await client.post('/admin/settings/default_locale', { type: 'text', value: 'de', is_public: '1' })).statusCode, 404);
      const by = { actor: { id: 1, name: 'Someone', email: 'someone@example.com' }, ip: null };
      await assert.rejects(t.app.services.settings.delete(by, 'default_locale'), { status: 422, message: 'The site needs this setting: it cannot be deleted.' });
      const keys = (await t.app.services.settings.all()).map((setting) => setting.key);
      for (const key of ['site_name', 'site_description', 'default_locale', 'locales']) assert.ok(keys.includes(key), key);
      assert.equal((await settingLines(t)).length, 0);
    });
  });

  describe('the custom settings (Advanced)', () => {
    it('says there is no custom setting yet on a fresh database', async () => {
      assert.match((await client.get('/admin/settings')).body, /<p class="muted">No custom settings yet\.<\/p>/);
    });

    it('lists every custom setting, public and private, with its value', async () => {
      await t.app.services.settings.put('smtp_note', 'internal only', false);
      await t.app.services.settings.put('featured', ['en', 'fr'], true);
      const response = await client.get('/admin/settings');
      assert.equal(response.statusCode, 200);
      assert.match(response.body, /<code class="setting-key">smtp_<wbr>note<\/code><\/a><\/td>\s*<td class="value-cell" data-label="Value"><code>internal only<\/code>/);
      assert.match(response.body, /<code>\[&quot;en&quot;,&quot;fr&quot;\]<\/code>/);
    });

    const adds = [
      { name: 'text, kept as a string even when it looks like a number', form: { key: 'tagline', type: 'text', value: '15' }, stored: '15' },
      { name: 'a JSON number', form: { key: 'max_upload_mb', type: 'json', value: '20' }, stored: 20 },
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
      assert.equal((await t.app.services.settings.findCustom('api_secret_hint'))?.is_public, 0);
    });

    const invalid = [
      { name: 'no key', form: { key: '', type: 'text', value: 'x' }, field: 'key', message: 'The key field is required.' },
      { name: 'a key with spaces', form: { key: 'site name', type: 'text', value: 'x' }, field: 'key', message: 'The key field format is invalid.' },
      { name: 'a key starting with a digit', form: { key: '1st', type: 'text', value: 'x' }, field: 'key', message: 'The key field format is invalid.' },
      { name: 'the key "site" (the site form’s address)', form: { key: 'site', type: 'text', value: 'x' }, field: 'key', message: 'The key field format is invalid.' },
      { name: 'a key of the site form', form: { key: 'posts_per_page', type: 'json', value: '0' }, field: 'key', message: 'This setting belongs to the site form; change it there.' },
      { name: 'a key that exists', form: { key: 'contact_email', type: 'text', value: 'x' }, field: 'key', message: 'A setting with this key already exists.' },
      { name: 'a key over 100 characters', form: { key: `k${'x'.repeat(100)}`, type: 'text', value: 'x' }, field: 'key', message: 'The key field must not be greater than 100 characters.' },
      { name: 'JSON that does not parse', form: { key: 'broken', type: 'json', value: '{nope' }, field: 'value', message: 'The value is not valid JSON.' },
      { name: 'an unknown type', form: { key: 'typed', type: 'yaml', value: 'x' }, field: 'type', message: 'The selected type is invalid.' },
      { name: 'no value field', form: { key: 'novalue', type: 'text' }, field: 'value', message: 'The value field is required.' },
    ];
    for (const row of invalid) {
      it(`refuses to add a setting with ${row.name}: 422, inline error, nothing written`, async () => {
        await t.app.services.settings.put('contact_email', 'editors@example.com', false);
        const before = await t.app.services.settings.all();
        const response = await client.submit('/admin/settings/new', '/admin/settings', row.form);
        assert.equal(response.statusCode, 422);
        assert.equal(fieldError(response.body, row.field), row.message);
        assert.deepEqual(await t.app.services.settings.all(), before);
        assert.equal((await settingLines(t)).length, 0);
      });
    }

    it('shows every error of the form at once', async () => {
      const response = await client.submit('/admin/settings/new', '/admin/settings', { key: 'Bad Key', type: 'json', value: '{nope' });
      assert.equal(response.statusCode, 422);
      assert.equal(fieldError(response.body, 'key'), 'The key field format is invalid.');
      assert.equal(fieldError(response.body, 'value'), 'The value is not valid JSON.');
    });

    it('shows a string setting as text and any other as indented JSON in its form', async () => {
      await t.app.services.settings.put('tagline', 'Weekly notes', true);
      await t.app.services.settings.put('featured', ['en', 'fr'], true);
      const text = await client.get('/admin/settings/tagline/edit');
      assert.match(text.body, /<option value="text" selected>/);
      assert.match(text.body, />Weekly notes<\/textarea>/);
      const json = await client.get('/admin/settings/featured/edit');
      assert.match(json.body, /<option value="json" selected>/);
      assert.match(json.body, />\[\n {2}&quot;en&quot;,\n {2}&quot;fr&quot;\n\]<\/textarea>/);
    });

    it('edits a value, and GET /api/settings returns the new one; the audit line names the setting, not the value', async () => {
      await t.app.services.settings.put('tagline', 'Weekly notes', true);
      const response = await client.submit('/admin/settings/tagline/edit', '/admin/settings/tagline', { type: 'text', value: 'Monthly notes', is_public: '1' });
      assert.equal(response.statusCode, 303);
      assert.equal((await publicSettings(t)).tagline, 'Monthly notes');
      const [line] = await auditRows(t);
      assert.deepEqual([line?.action, line?.subject_label, JSON.parse(line?.details ?? '{}')], ['setting.updated', 'tagline', { fields: ['value'] }]);
      assert.ok(!line?.details.includes('Monthly notes'), 'the audit line does not copy values');
    });

    it('names a private (secret) setting in its audit line, never its value, on the audit page too', async () => {
      await t.app.services.settings.put('smtp_password', 'old-secret', false);
      await client.submit('/admin/settings/smtp_password/edit', '/admin/settings/smtp_password', { type: 'text', value: 'hunter2-new-secret' });
      const [line] = await auditRows(t);
      assert.deepEqual([line?.action, line?.subject_label], ['setting.updated', 'smtp_password']);
      assert.doesNotMatch(JSON.stringify(line), /hunter2|old-secret/);
      const audit = await client.get('/admin/audit');
      assert.match(audit.body, /changed the setting smtp_password/);
      assert.doesNotMatch(audit.body, /hunter2|old-secret/);
    });

    it('makes a public setting private, and back: GET /api/settings follows', async () => {
      await t.app.services.settings.put('analytics_id', 'UA-1', true);
      await client.submit('/admin/settings/analytics_id/edit', '/admin/settings/analytics_id', { type: 'text', value: 'UA-1' });
      assert.ok(!('analytics_id' in (await publicSettings(t))));
      const [line] = await auditRows(t);
      assert.deepEqual(JSON.parse(line?.details ?? '{}'), { fields: ['is_public'] });
      await client.submit('/admin/settings/analytics_id/edit', '/admin/settings/analytics_id', { type: 'text', value: 'UA-1', is_public: '1' });
      assert.equal((await publicSettings(t)).analytics_id, 'UA-1');
    });

    it('writes no audit line when nothing changed', async () => {
      await t.app.services.settings.put('featured', ['en', 'fr'], true);
      const response = await client.submit('/admin/settings/featured/edit', '/admin/settings/featured', { type: 'json', value: '["en","fr"]', is_public: '1' });
      assert.equal(response.statusCode, 303);
      assert.equal((await settingLines(t)).length, 0);
    });

    it('refuses an edit with JSON that does not parse, keeping the stored value', async () => {
      await t.app.services.settings.put('featured', ['en', 'fr'], true);
      const response = await client.submit('/admin/settings/featured/edit', '/admin/settings/featured', { type: 'json', value: '[en, fr', is_public: '1' });
      assert.equal(response.statusCode, 422);
      assert.equal(fieldError(response.body, 'value'), 'The value is not valid JSON.');
      assert.match(response.body, />\[en, fr<\/textarea>/, 'what was typed stays in the form');
      assert.deepEqual((await publicSettings(t)).featured, ['en', 'fr']);
    });

    it('deletes a custom setting after a confirmation page, and GET /api/settings stops returning it', async () => {
      await t.app.services.settings.put('analytics_id', 'UA-1', true);
      const confirm = await client.get('/admin/settings/analytics_id/delete');
      assert.equal(confirm.statusCode, 200);
      assert.match(confirm.body, /no longer be returned by GET \/api\/settings/);
      assert.ok('analytics_id' in (await publicSettings(t)), 'the confirmation page deletes nothing');
      const response = await client.post('/admin/settings/analytics_id/delete');
      assert.equal(response.statusCode, 303);
      assert.ok(!('analytics_id' in (await publicSettings(t))));
      const [line] = await auditRows(t);
      assert.deepEqual([line?.action, line?.subject_label], ['setting.deleted', 'analytics_id']);
    });

    it('answers 404 for a setting that does not exist', async () => {
      for (const url of ['/admin/settings/nope/edit', '/admin/settings/nope/delete', '/admin/settings/..%2Fx/edit']) assert.equal((await client.get(url)).statusCode, 404, url);
      await client.get('/admin/settings');
      assert.equal((await client.post('/admin/settings/nope', { type: 'text', value: 'x' })).statusCode, 404);
    });
  });
});
