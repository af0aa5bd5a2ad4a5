// Whether the APP_KEY in use opens the two-factor secrets stored in the database. A database
// restored without the key it was used with looks healthy, but every account with two-factor
// sign-in is then refused ("code invalid") and nothing says why: the start and db:restore ask.
import type { Db } from '../../db/connect.js';
import { SecretBox } from './secret-box.js';

/** The line the start (and db:restore) prints when the key does not open them. */
export const APP_KEY_MISMATCH =
  'APP_KEY cannot open the two-factor secrets stored in the database: they were sealed with another key (a restore without its APP_KEY?). ' +
  'Set APP_KEY (in development, DATA_DIR/app.key) to the key kept with the database; until then accounts with two-factor sign-in cannot sign in.';

/**
 * True when the stored secrets open with `appKey`, or when there are none. One sealed row is
 * tried, not all: every secret is sealed with the one key, so one tells for the rest.
 */
export async function storedSecretsOpen(db: Db, appKey: Buffer): Promise<boolean> {
  const row = await db.kysely.selectFrom('users').select('two_factor_secret').where('two_factor_secret', 'is not', null).limit(1).executeTakeFirst();
  if (row?.two_factor_secret === undefined || row.two_factor_secret === null) return true;
  return new SecretBox(appKey).decrypt(row.two_factor_secret) !== null;
}
