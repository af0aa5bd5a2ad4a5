// Set-up shared by the panel tests: an administrator made the only way there is (the CLI's
// admin:create, run in-process on the test database) and a client signed in to the panel.
import type { TestApp } from '../helpers.js';
import { runInProcess } from '../cli/harness.js';
import type { User } from '../../src/db/types.js';
import { characters, WebClient } from '../support/client.js';

let counter = 0;

export type Admin = User & { plainPassword: string };

/** Creates an administrator with `npm run cli -- admin:create --name --email --password`. */
export async function createAdminByCli(t: TestApp, fields: { name?: string; email?: string; password?: string } = {}): Promise<Admin> {
  counter += 1;
  const name = fields.name ?? `Admin ${counter}`;
  const email = fields.email ?? `admin${counter}-${process.pid}@example.com`;
  const password = fields.password ?? 'panel keeper 2026';
  const result = await runInProcess(['admin:create', '--name', name, '--email', email, '--password', password], { db: t.db, config: t.config });
  if (result.code !== 0) throw new Error(`admin:create failed (${result.code}): ${result.stderr}`);
  const user = await t.app.services.users.findByEmail(email);
  if (user === undefined) throw new Error('admin:create reported success but the user is missing');
  return { ...user, plainPassword: password };
}

/** A client signed in to the panel as a new administrator. */
export async function signedInAdmin(t: TestApp, fields: { name?: string; email?: string } = {}): Promise<{ admin: Admin; client: WebClient }> {
  const admin = await createAdminByCli(t, fields);
  const client = new WebClient(t.app);
  await client.adminLogin(admin.email, admin.plainPassword);
  return { admin, client };
}

/** The audit lines, newest first, as the database holds them. */
export function auditRows(t: TestApp) {
  return t.db.kysely.selectFrom('audit_logs').selectAll().orderBy('id', 'desc').execute();
}

/** The text of an inline field error on a page (the partials render `<p class="field-error" id="field-NAME-error">`). */
export function fieldError(html: string, field: string): string | null {
  const match = new RegExp(`id="field-${field}-error">([^<]*)<`).exec(html);
  return match?.[1] === undefined ? null : decode(match[1]);
}

/** Undoes the pages' HTML escaping (numeric references beyond Latin-1 included), to compare texts. */
export function decode(text: string): string {
  return characters(text).replace(/&#39;/g, "'").replace(/&quot;/g, '"').replace(/&lt;/g, '<').replace(/&gt;/g, '>').replace(/&amp;/g, '&');
}

/**
 * The panel's site form (POST /admin/settings/site) as a fresh database fills it, with `changes`
 * applied; `locales` is the list of ticked languages (sent as repeated fields, as a browser does).
 */
export type SiteFormChanges = { locales?: string[] } & Partial<
  Record<'site_name' | 'site_description' | 'home_headline' | 'home_intro' | 'home_api_card' | 'default_locale' | 'posts_per_page', string | undefined>
>;

export function siteForm(changes: SiteFormChanges = {}): URLSearchParams {
  const { locales = ['en', 'fr'], ...fields } = changes;
  const form = new URLSearchParams();
  const values: Record<string, string | undefined> = {
    site_name: 'Tessera',
    site_description: 'Accounts, tokens and posts.',
    home_headline: '',
    home_intro: '',
    home_api_card: '1',
    default_locale: 'en',
    posts_per_page: '15',
    ...fields,
  };
  for (const [name, value] of Object.entries(values)) if (value !== undefined) form.append(name, value);
  for (const code of locales) form.append('locales', code);
  return form;
}
