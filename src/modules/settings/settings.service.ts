// Site settings: key → JSON value. The site's own settings (site.ts's SITE_KEYS) are named,
// typed fields: edited together on the panel's site form, always public, never deleted (empty
// means "the default"). Any other key is a custom setting, public or private, edited as text or
// JSON; only public ones leave the service through GET /api/settings, and mail credentials and
// the like stay private. Every change made by someone leaves one audit line per setting, naming
// it and never its value (a private one may be a secret).
import type { Db } from '../../db/connect.js';
import { writeTransaction } from '../../db/connect.js';
import type { SettingRow } from '../../db/types.js';
import { then, type MaybePromise } from '../../lib/maybe-promise.js';
import type { Acting, AuditService } from '../audit/audit.service.js';
import { LOCALES } from '../i18n/translator.js';
import { invalid, type FieldMessages } from '../shared/errors.js';
import { decodeSetting as decode, siteValues } from './settings.repository.js';
import { checkSiteForm, type SiteFormInput, type SiteValues } from './site-form.js';
import { SITE_KEYS, isSiteKey, siteSettings, type SiteDefaults, type SiteKey, type SiteSettings } from './site.js';

export type Setting = { key: string; value: unknown; is_public: boolean; updated_at: string };

/** A custom setting's form: the value typed as text, or as JSON. */
export type SettingForm = { type: string; value: string; isPublic: boolean };

/** The site's settings as GET /api/settings shows them: each with its type, the defaults applied. */
export type PublicSiteSettings = {
  site_name: string;
  site_description: string | null;
  home_headline: string | null;
  home_intro: string | null;
  home_api_card: boolean;
  default_locale: string;
  locales: string[];
  posts_per_page: number;
};

/** The refusals of this module, as message keys (src/locales/{en,fr}/settings-form.json). */
export const SETTING_RULES = {
  exists: 'admin.settings.errors.exists',
  siteKey: 'settings_form.errors.site_key',
  needed: 'settings_form.errors.needed',
  json: 'admin.settings.errors.json',
} as const;

/** What the site shows, typed, from the settings in effect. */
export function presentSite(site: SiteSettings): PublicSiteSettings {
  return {
    site_name: site.name,
    site_description: site.description,
    home_headline: site.headline,
    home_intro: site.intro,
    home_api_card: site.apiCard,
    default_locale: site.defaultLocale,
    locales: [...(site.contentLocales ?? site.interfaceLocales)],
    posts_per_page: site.postsPerPage,
  };
}

/** The site form's fields as the settings in effect fill them (an empty text shows the default). */
function formValues(site: SiteSettings): SiteValues {
  return {
    site_name: site.name,
    site_description: site.description ?? '',
    home_headline: site.headline ?? '',
    home_intro: site.intro ?? '',
    home_api_card: site.apiCard,
    default_locale: site.defaultLocale,
    locales: [...(site.contentLocales ?? LOCALES)],
    posts_per_page: site.postsPerPage,
  };
}

export class SettingsService {
  /** `readSite` reads the site settings' stored values (services.ts hands in a kept read). */
  constructor(
    private readonly db: Db,
    private readonly audit: Pick<AuditService, 'recordBy'>,
    private readonly defaults: SiteDefaults = { appName: 'Tessera', locale: 'en' },
    private readonly readSite: () => MaybePromise<Record<string, unknown>> = siteValues(db),
  ) {}

  /** The settings a reader sees the effect of (name, languages, the home page), as they are now. */
  site(): MaybePromise<SiteSettings> {
    return then(this.readSite(), (values) => siteSettings(values, this.defaults));
  }

  /** What applies when nothing is set (or the settings cannot be read). */
  siteDefaults(): SiteSettings {
    return siteSettings({}, this.defaults);
  }

  /** The public settings as one object: the site's own, typed, then the public custom ones. */
  async publicSettings(): Promise<PublicSiteSettings & Record<string, unknown>> {
    // One after the other: the kept site read may fail at once (a closed database), and a query
    // started beside it would then reject with nobody listening.
    const site = await this.site();
    const rows = await this.db.kysely.selectFrom('settings').select(['key', 'value']).where('is_public', '=', 1).orderBy('key').execute();
    const custom = rows.filter((row) => !isSiteKey(row.key)).map((row) => [row.key, decode(row.value)] as const);
    return { ...Object.fromEntries(custom), ...presentSite(site) };
  }

  /** The site form's values as they are now. */
  async siteForm(): Promise<SiteValues> {
    return formValues(await this.site());
  }

  /**
   * Saves the site form: every field's error at once and nothing written, or each setting that
   * changed written (in one transaction) with its audit line.
   */
  async saveSite(by: Acting, input: SiteFormInput, earlier: FieldMessages = {}): Promise<SiteKey[]> {
    const stored = await this.readSite();
    const { values, errors } = checkSiteForm(input, Array.isArray(stored.locales) ? (stored.locales as unknown[]).filter((tag): tag is string => typeof tag === 'string') : []);
    const all = { ...errors, ...earlier };
    if (Object.keys(all).length > 0) throw invalid(all);
    const now = formValues(await this.site());
    const changed = SITE_KEYS.filter((key) => JSON.stringify(values[key]) !== JSON.stringify(now[key]));
    if (changed.length === 0) return [];
    await writeTransaction(this.db, async (trx) => {
      for (const key of changed) await this.write(trx, key, values[key], true);
    });
    for (const key of changed) await this.audit.recordBy(by, 'setting.updated', { type: 'setting', id: key, label: key }, { fields: ['value'] });
    return changed;
  }

  /** Every setting, the site's own included (the seed and the tests read these). */
  async all(): Promise<Setting[]> {
    const rows = await this.db.kysely.selectFrom('settings').selectAll().orderBy('key').execute();
    return rows.map((row) => ({ key: row.key, value: decode(row.value), is_public: Number(row.is_public) === 1, updated_at: row.updated_at }));
  }

  /** The custom settings (the panel's "Advanced" part): every key the site form does not own. */
  async custom(): Promise<Setting[]> {
    return (await this.all()).filter((setting) => !isSiteKey(setting.key));
  }

  /** A custom setting's row; undefined for a key of the site form or one that does not exist. */
  async findCustom(key: string): Promise<SettingRow | undefined> {
    if (isSiteKey(key)) return undefined;
    return this.db.kysely.selectFrom('settings').selectAll().where('key', '=', key).executeTakeFirst();
  }

  /** Adds a custom setting; every error at once: the schema's (`earlier`), a key of the site form or one that exists, JSON that does not parse. */
  async createCustom(by: Acting, key: string, form: SettingForm, earlier: FieldMessages = {}): Promise<void> {
    const errors: FieldMessages = { ...earlier };
    const value = customValue(form, errors);
    if (errors.key === undefined && isSiteKey(key)) errors.key = [{ key: SETTING_RULES.siteKey }];
    else if (errors.key === undefined && (await this.findCustom(key)) !== undefined) errors.key = [{ key: SETTING_RULES.exists }];
    if (Object.keys(errors).length > 0) throw invalid(errors);
    await this.put(key, value, form.isPublic);
    await this.audit.recordBy(by, 'setting.created', { type: 'setting', id: key, label: key }, { fields: form.isPublic ? ['value', 'is_public'] : ['value'] });
  }

  /** Changes a custom setting's value and visibility; nothing is written (nor audited) when neither changed. */
  async updateCustom(by: Acting, setting: SettingRow, form: SettingForm, earlier: FieldMessages = {}): Promise<void> {
    const errors: FieldMessages = { ...earlier };
    const value = customValue(form, errors);
    if (isSiteKey(setting.key)) errors.key = [{ key: SETTING_RULES.siteKey }];
    if (Object.keys(errors).length > 0) throw invalid(errors);
    const fields = [...(JSON.stringify(value) !== setting.value ? ['value'] : []), ...(form.isPublic !== (Number(setting.is_public) === 1) ? ['is_public'] : [])];
    if (fields.length === 0) return;
    await this.put(setting.key, value, form.isPublic);
    await this.audit.recordBy(by, 'setting.updated', { type: 'setting', id: setting.key, label: setting.key }, { fields });
  }

  /** Deletes a custom setting. A setting the site needs (its form's) is refused, from every face. */
  async delete(by: Acting, key: string): Promise<void> {
    if (isSiteKey(key)) throw invalid({ key: [{ key: SETTING_RULES.needed }] });
    await this.db.kysely.deleteFrom('settings').where('key', '=', key).execute();
    await this.audit.recordBy(by, 'setting.deleted', { type: 'setting', id: key, label: key });
  }

  /** Creates or replaces a setting as given, with no rule and no audit line: the seed's and the tests' way in. */
  async put(key: string, value: unknown, isPublic: boolean): Promise<void> {
    await this.write(this.db.kysely, key, value, isPublic);
  }

  private async write(db: Db['kysely'] | Parameters<Parameters<typeof writeTransaction>[1]>[0], key: string, value: unknown, isPublic: boolean): Promise<void> {
    const row = { key, value: JSON.stringify(value), is_public: isPublic ? 1 : 0, updated_at: new Date().toISOString() };
    await db
      .insertInto('settings')
      .values(row)
      .onConflict((oc) => oc.column('key').doUpdateSet({ value: row.value, is_public: row.is_public, updated_at: row.updated_at }))
      .execute();
  }
}

/** The value a custom setting's form stores: text as typed, or parsed JSON (an error on `value` when it does not parse). */
function customValue(form: SettingForm, errors: FieldMessages): unknown {
  if (errors.type !== undefined || errors.value !== undefined || form.type !== 'json') return form.value;
  try {
    return JSON.parse(form.value) as unknown;
  } catch {
    errors.value = [{ key: SETTING_RULES.json }];
    return form.value;
  }
}
