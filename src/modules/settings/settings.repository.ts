// Reads of the settings table shared by the service and the read cache (src/perf/kept-reads.ts).
import type { Db } from '../../db/connect.js';
import { SITE_KEYS } from './site.js';

/** A stored value decoded; null when it is not JSON. */
export function decodeSetting(json: string): unknown {
  try {
    return JSON.parse(json);
  } catch {
    return null;
  }
}

/** The stored values of the site settings (key → value); a key not set is absent. */
export function siteValues(db: Db): () => Promise<Record<string, unknown>> {
  return async () => {
    const rows = await db.kysely.selectFrom('settings').select(['key', 'value']).where('key', 'in', [...SITE_KEYS]).execute();
    return Object.fromEntries(rows.map((row) => [row.key, decodeSetting(row.value)]));
  };
}
