// When a browser session began, for its absolute lifetime (SESSION_ABSOLUTE_LIFETIME): the idle
// lifetime restarts with each request, this does not. Sessions from before this migration have
// none and end by their idle lifetime alone.
import { timestamp, type AnyDb } from './helpers.js';

export async function up(db: AnyDb): Promise<void> {
  await db.schema.alterTable('sessions').addColumn('created_at', timestamp(db)).execute();
}

export async function down(db: AnyDb): Promise<void> {
  await db.schema.alterTable('sessions').dropColumn('created_at').execute();
}
