// Messages from the locale files (src/locales/<locale>/*.json, merged; one file per area so
// that areas are edited independently), Laravel-style: flat keys and `:name` placeholders.
// A key missing in a locale falls back to English, then to the key itself.
import { readFileSync, readdirSync } from 'node:fs';

export const LOCALES = ['en', 'fr'] as const;
export type Locale = (typeof LOCALES)[number];

// Keys looked up can come from input (a field name in `attributes.<field>`, a message a service
// wrote), so a catalog is a Map: on a plain object, `t('en', 'constructor')` would find
// Object.prototype's function instead of no message.
const catalogs = new Map<string, ReadonlyMap<string, string>>();

function catalog(locale: string): ReadonlyMap<string, string> {
  let messages = catalogs.get(locale);
  if (messages === undefined) {
    const dir = new URL(`../../locales/${locale}/`, import.meta.url);
    const merged = new Map<string, string>();
    for (const file of readdirSync(dir).filter((name) => name.endsWith('.json')).sort()) {
      for (const [key, value] of Object.entries(JSON.parse(readFileSync(new URL(file, dir), 'utf8')) as Record<string, string>)) merged.set(key, value);
    }
    messages = merged;
    catalogs.set(locale, messages);
  }
  return messages;
}

export function isLocale(value: string): value is Locale {
  return (LOCALES as readonly string[]).includes(value);
}

const PLACEHOLDER = /:([a-z_]+)/g;

/** The message for `key` in `locale`, with `:name` placeholders replaced. */
export function t(locale: string, key: string, replace?: Record<string, string | number>): string {
  const template = catalog(isLocale(locale) ? locale : 'en').get(key) ?? catalog('en').get(key) ?? key;
  // Without values there is nothing to replace (a page asks for dozens of messages, most plain).
  if (replace === undefined || !template.includes(':')) return template;
  return template.replace(PLACEHOLDER, (match, name: string) => (Object.hasOwn(replace, name) ? String(replace[name]) : match));
}

/**
 * Laravel's attribute display: the locale's `attributes.<field>` when it has one (French says
 * "mot de passe", not "password"), else the field with spaces: `device_name` → "device name".
 */
export function attributeName(field: string, locale = 'en'): string {
  const key = `attributes.${field}`;
  const translated = t(locale, key);
  return translated === key ? field.replace(/_/g, ' ') : translated;
}

/**
 * A message not yet in a language: a key of the locale files, the field it is about (its
 * `:attribute`, named in the reader's language) and any other values. The domain and the
 * validation write these; the face that answers translates them for its reader.
 */
export type Message = { key: string; attribute?: string; replace?: Record<string, string | number> };

/** `message` in `locale`. */
export function translate(locale: string, message: Message): string {
  const replace = message.attribute === undefined ? message.replace : { ...message.replace, attribute: attributeName(message.attribute, locale) };
  return t(locale, message.key, replace);
}
