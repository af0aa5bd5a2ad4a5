// API error messages name their fields in the reader's language, as the pages do ("Le champ nom
// de l'appareil est obligatoire."): the validation envelope and the handlers' own refusals take a
// field's name from attributeName (src/modules/i18n/translator.ts), the pages' one owner, and
// every field an API route takes has a French name in the locale files.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { t } from '../../src/modules/i18n/translator.js';
import { buildTestApp, type TestApp } from '../helpers.js';

type Envelope = { message: string; errors: Record<string, string[]> };
type Operation = { parameters?: { name: string; in: string }[]; requestBody?: { content: Record<string, { schema: { properties?: Record<string, unknown> } }> } };

describe('field names in the API’s error messages', () => {
  let testApp: TestApp;
  let ip = 0;

  before(async () => {
    testApp = await buildTestApp();
  });
  after(() => testApp.close());

  const call = async (method: 'GET' | 'POST', url: string, language: string, payload?: object) => {
    ip += 1;
    const response = await testApp.app.inject({ method, url, payload, headers: { accept: 'application/json', 'accept-language': language }, remoteAddress: `10.27.8.${ip}` });
    return { status: response.statusCode, body: response.json() as Envelope };
  };

  it('has a French name for every field an API route takes (body, query string and path)', async () => {
    const doc = (await testApp.app.inject({ url: '/api/openapi.json' })).json() as { paths: Record<string, Record<string, Operation>> };
    const fields = new Set<string>();
    for (const [path, operations] of Object.entries(doc.paths)) {
      if (!path.startsWith('/api/')) continue;
      for (const operation of Object.values(operations)) {
        for (const parameter of operation.parameters ?? []) if (parameter.in !== 'header' && parameter.in !== 'cookie') fields.add(parameter.name);
        for (const content of Object.values(operation.requestBody?.content ?? {})) for (const name of Object.keys(content.schema.properties ?? {})) fields.add(name);
      }
    }
    assert.ok(fields.has('device_name') && fields.has('per_page'), [...fields].join(', '));
    const unnamed = [...fields].filter((field) => t('fr', `attributes.${field}`) === `attributes.${field}`);
    assert.deepEqual(unnamed, [], 'fields with no attributes.<field> in src/locales/fr');
  });

  const cases: { name: string; method: 'GET' | 'POST'; url: string; payload?: object; field: string; en: string; fr: string }[] = [
    {
      name: 'a required body field (the schema’s validation)',
      method: 'POST',
      url: '/api/tokens',
      payload: { email: 'someone@example.com', password: 'secret-password' },
      field: 'device_name',
      en: 'The device name field is required.',
      fr: "Le champ nom de l'appareil est obligatoire.",
    },
    {
      name: 'a query parameter out of range',
      method: 'GET',
      url: '/api/posts?per_page=0',
      field: 'per_page',
      en: 'The per page field must be at least 1.',
      fr: 'Le champ nombre par page doit être au moins 1.',
    },
    {
      name: 'a value a handler refuses (a status only administrators may list)',
      method: 'GET',
      url: '/api/posts?status=draft',
      field: 'status',
      en: 'The selected status is invalid.',
      fr: 'La valeur sélectionnée pour statut est invalide.',
    },
  ];
  for (const { name, method, url, payload, field, en, fr } of cases) {
    it(`names the field in French, and keeps the English text, for ${name}`, async () => {
      const english = await call(method, url, 'en', payload);
      assert.equal(english.status, 422);
      assert.deepEqual(english.body, { message: en, errors: { [field]: [en] } });
      const french = await call(method, url, 'fr-FR,fr;q=0.9', payload);
      assert.equal(french.status, 422);
      assert.deepEqual(french.body, { message: fr, errors: { [field]: [fr] } });
    });
  }
});
