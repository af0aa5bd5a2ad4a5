// Account security (issue 17): two-factor sign-in, passkeys, the session list, email changes
// waiting for their link, and the devices an account has signed in from.
import { timestamp, withId, type AnyDb } from './helpers.js';

export async function up(db: AnyDb): Promise<void> {
  const ts = timestamp(db);
  // TOTP: the secret encrypted with a key derived from APP_KEY (never readable from a dump), the
  // recovery codes as a JSON array of their SHA-256, and the last time step accepted (a code is
  // good once). Two-factor is on only once a first code confirmed the secret.
  await db.schema.alterTable('users').addColumn('two_factor_secret', 'text').execute();
  await db.schema.alterTable('users').addColumn('two_factor_recovery_codes', 'text').execute();
  await db.schema.alterTable('users').addColumn('two_factor_confirmed_at', ts).execute();
  await db.schema.alterTable('users').addColumn('two_factor_last_step', 'bigint').execute();

  await withId(db, db.schema.createTable('passkeys'))
    .addColumn('user_id', 'integer', (c) => c.notNull().references('users.id').onDelete('cascade'))
    .addColumn('name', 'varchar(255)', (c) => c.notNull())
    // base64url credential id, as the browser reports it.
    .addColumn('credential_id', 'varchar(1024)', (c) => c.notNull().unique())
    // base64url COSE public key: public by nature, no secret.
    .addColumn('public_key', 'text', (c) => c.notNull())
    .addColumn('counter', 'bigint', (c) => c.notNull().defaultTo(0))
    /** JSON array of transports (usb, internal, hybrid…). */
    .addColumn('transports', 'text', (c) => c.notNull().defaultTo('[]'))
    .addColumn('backed_up', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('last_used_at', ts)
    .addColumn('created_at', ts, (c) => c.notNull())
    .execute();
  await db.schema.createIndex('passkeys_user_id_index').on('passkeys').column('user_id').execute();

  // What the session list shows of each browser session.
  await db.schema.alterTable('sessions').addColumn('ip', 'varchar(45)').execute();
  await db.schema.alterTable('sessions').addColumn('user_agent', 'varchar(512)').execute();

  // Devices an account has signed in from (a SHA-256 fingerprint), for new-device alerts.
  await withId(db, db.schema.createTable('known_devices'))
    .addColumn('user_id', 'integer', (c) => c.notNull().references('users.id').onDelete('cascade'))
    .addColumn('fingerprint', 'varchar(64)', (c) => c.notNull())
    .addColumn('created_at', ts, (c) => c.notNull())
    .addColumn('last_seen_at', ts, (c) => c.notNull())
    .addUniqueConstraint('known_devices_user_fingerprint_unique', ['user_id', 'fingerprint'])
    .execute();

  // One pending email change per account: the link to the new address confirms it, the one to
  // the old address cancels it; both stored as SHA-256.
  await withId(db, db.schema.createTable('email_changes'))
    .addColumn('user_id', 'integer', (c) => c.notNull().unique().references('users.id').onDelete('cascade'))
    .addColumn('new_email', 'varchar(255)', (c) => c.notNull())
    .addColumn('token_hash', 'varchar(64)', (c) => c.notNull())
    .addColumn('cancel_token_hash', 'varchar(64)', (c) => c.notNull())
    .addColumn('expires_at', ts, (c) => c.notNull())
    .addColumn('created_at', ts, (c) => c.notNull())
    .execute();
}

export async function down(db: AnyDb): Promise<void> {
  await db.schema.dropTable('email_changes').execute();
  await db.schema.dropTable('known_devices').execute();
  await db.schema.alterTable('sessions').dropColumn('user_agent').execute();
  await db.schema.alterTable('sessions').dropColumn('ip').execute();
  await db.schema.dropTable('passkeys').execute();
  for (const column of ['two_factor_last_step', 'two_factor_confirmed_at', 'two_factor_recovery_codes', 'two_factor_secret']) {
    await db.schema.alterTable('users').dropColumn(column).execute();
  }
}
