// Every message of the account pages and mails comes from the locale files, complete in English
// and French.
import assert from 'node:assert/strict';
import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { t } from '../../src/modules/i18n/translator.js';

const AREAS = ['auth', 'mail', 'profile'];
const read = (locale: string, area: string) => JSON.parse(readFileSync(`src/locales/${locale}/${area}.json`, 'utf8')) as Record<string, string>;
const placeholders = (text: string) => [...text.matchAll(/:([a-z_]+)/g)].map((m) => m[1]).sort();

describe('account locale files', () => {
  for (const area of AREAS) {
    it(`has the same keys and placeholders in en/${area}.json and fr/${area}.json`, () => {
      const en = read('en', area);
      const fr = read('fr', area);
      assert.deepEqual(Object.keys(fr).sort(), Object.keys(en).sort());
      for (const [key, text] of Object.entries(en)) {
        assert.deepEqual(placeholders(fr[key]!), placeholders(text), key);
        assert.notEqual(fr[key]!.trim(), '', key);
      }
    });
  }

  it("has Laravel's auth.failed and auth.throttle, in English and French", () => {
    assert.equal(t('en', 'auth.failed'), 'These credentials do not match our records.');
    assert.equal(t('en', 'auth.throttle', { seconds: 42 }), 'Too many login attempts. Please try again in 42 seconds.');
    assert.equal(t('fr', 'auth.failed'), 'Ces identifiants ne correspondent pas à nos enregistrements.');
    assert.equal(t('fr', 'auth.throttle', { seconds: 42 }), 'Tentatives de connexion trop nombreuses. Veuillez essayer de nouveau dans 42 secondes.');
  });

  it('defines, in both languages, every key the account templates and modules use', () => {
    const files = [
      ...readdirSync('src/views/auth').map((name) => join('src/views/auth', name)),
      'src/views/profile.eta',
      'src/views/dashboard.eta',
      'src/views/layouts/app.eta',
      'src/views/mail/message-html.eta',
      ...['auth/auth.service.ts', 'password-reset/password-reset.service.ts', 'verification/verification.service.ts', 'mail/mail.service.ts'].map((f) => join('src/modules', f)),
      ...readdirSync('src/http/web').map((name) => join('src/http/web', name)),
    ];
    const keys = new Set<string>();
    for (const file of files) {
      const text = readFileSync(file, 'utf8');
      for (const match of text.matchAll(/\bt\((?:[a-z]+, )?'([a-z_]+(?:\.[a-z_]+)+)'/g)) keys.add(match[1]!);
    }
    assert.ok(keys.size > 40, `found ${keys.size} keys`);
    for (const key of keys) {
      for (const locale of ['en', 'fr']) assert.notEqual(t(locale, key), key, `${locale}: ${key}`);
    }
    const fr = Object.assign({}, ...readdirSync('src/locales/fr').map((file) => read('fr', file.replace(/\.json$/, '')))) as Record<string, string>;
    for (const key of keys) assert.ok(key in fr, `fr has its own ${key}`);
  });
});
