// Site settings: key → JSON value, each marked public or private. Only public ones leave the
// service through GET /api/settings; mail credentials and the like stay private.
import type { Db } from '../../db/connect.js';
import { then, type MaybePromise } from '../../lib/maybe-promise.js';
import { decodeSetting as decode, siteValues } from './settings.repository.js';
import { siteSettings, type SiteDefaults, type SiteSettings } from './site.js';

export type Setting = { key: string; value: unknown; is_public: boolean; updated_at: string };

export class SettingsService {
  /** `readSite` reads the site settings' stored values (services.ts hands in a kept read). */
  constructor(
    private readonly db: Db,
    private readonly defaults: SiteDefaults = { appName: 'Tessera', locale: 'en' },
    private readonly readSite: () => MaybePromise<Record<string, unknown>> = siteValues(db),
  ) {}

  /** The settings a reader sees the effect of (name, languages), as they are now. */
  site(): MaybePromise<SiteSettings> {
    return then(this.readSite(), (values) => siteSettings(values, this.defaults));
  }

  /** What applies when nothing is set (or the settings cannot be read). */
  siteDefaults(): SiteSettings {
    return siteSettings({}, this.defaults);
  }

  /** The public settings as one object. */
  async publicSettings(): Promise<Record<string, unknown>> {
    const rows = await this.db.kysely.selectFrom('settings').select(['key', 'value']).where('is_public', '=', 1).orderBy('key').execute();
    return Object.fromEntries(rows.map((row) => [row.key, decode(row.value)]));
  }

  async all(): Promise<Setting[]> {
    const rows = await this.db.kysely.selectFrom('settings').selectAll().orderBy('key').execute();
    return rows.map((row) => ({ key: row.key, value: decode(row.value), is_public: Number(row.is_public) === 1, updated_at: row.updated_at }));
  }

  /** Creates or replaces a setting. */
  async put(key: string, value: unknown, isPublic: boolean): Promise<void> {
    const row = { key, value: JSON.stringify(value), is_public: isPublic ? 1 : 0, updated_at: new Date().toISOString() };
    await this.db.kysely
      .insertInto('settings')
      .values(row)
      .onConflict((oc) => oc.column('key').doUpdateSet({ value: row.value, is_public: row.is_public, updated_at: row.updated_at }))
      .execute();
  }

  async remove(key: string): Promise<void> {
    await this.db.kysely.deleteFrom('settings').where('key', '=', key).execute();
  }
}
