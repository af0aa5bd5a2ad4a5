// Site settings: key → JSON value, each marked public or private. Only public ones leave the
// service through GET /api/settings; mail credentials and the like stay private.
import type { Db } from '../../db/connect.js';

export type Setting = { key: string; value: unknown; is_public: boolean; updated_at: string };

function decode(json: string): unknown {
  try {
    return JSON.parse(json);
  } catch {
    return null;
  }
}

export class SettingsService {
  constructor(private readonly db: Db) {}

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
