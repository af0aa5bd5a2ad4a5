// Row types of every table, as Kysely sees them. Timestamps are ISO-8601 UTC strings on both
// databases (PostgreSQL's timestamptz is parsed to that form in connect.ts); booleans are 0/1.
import type { ColumnType, Generated, Insertable, Selectable, Updateable } from 'kysely';

type Timestamp = string;

export interface UsersTable {
  id: Generated<number>;
  name: string;
  email: string;
  /** The argon2id (or imported bcrypt) hash; null for an account made through a provider. */
  password: string | null;
  email_verified_at: Timestamp | null;
  is_admin: ColumnType<number, number | undefined, number>;
  remember_token: string | null;
  locale: string | null;
  created_at: Timestamp;
  updated_at: Timestamp;
  /** The TOTP secret, encrypted with a key derived from APP_KEY (modules/two-factor). */
  two_factor_secret: ColumnType<string | null, string | null | undefined, string | null>;
  /** JSON array of the SHA-256 of the unused recovery codes. */
  two_factor_recovery_codes: ColumnType<string | null, string | null | undefined, string | null>;
  /** Set when a first code confirmed the secret: two-factor sign-in is on. */
  two_factor_confirmed_at: ColumnType<Timestamp | null, Timestamp | null | undefined, Timestamp | null>;
  /** The last TOTP time step accepted (replay guard). */
  two_factor_last_step: ColumnType<number | null, number | null | undefined, number | null>;
}

export interface PersonalAccessTokensTable {
  id: Generated<number>;
  user_id: number;
  name: string;
  /** SHA-256 hex of the secret part of the plaintext token. */
  token: string;
  /** JSON array of ability names. */
  abilities: string;
  last_used_at: Timestamp | null;
  expires_at: Timestamp | null;
  created_at: Timestamp;
  updated_at: Timestamp;
}

export interface PostsTable {
  id: Generated<number>;
  author_id: number | null;
  title: string;
  slug: string;
  excerpt: string;
  body: string;
  locale: string;
  status: 'draft' | 'published' | 'archived';
  published_at: Timestamp | null;
  created_at: Timestamp;
  updated_at: Timestamp;
}

export interface SettingsTable {
  key: string;
  /** JSON-encoded value. */
  value: string;
  is_public: number;
  updated_at: Timestamp;
}

export interface SessionsTable {
  id: string;
  user_id: number | null;
  admin_user_id: number | null;
  /** JSON of the session data. */
  payload: string;
  expires_at: Timestamp;
  updated_at: Timestamp;
  /** When the session began (null for sessions from before it was recorded). */
  created_at: Timestamp | null;
  /** The client's address and user agent when the session was last saved (the session list). */
  ip: string | null;
  user_agent: string | null;
}

export interface PasskeysTable {
  id: Generated<number>;
  user_id: number;
  name: string;
  /** base64url credential id. */
  credential_id: string;
  /** base64url COSE public key. */
  public_key: string;
  /** Signature counter. */
  counter: ColumnType<number, number | undefined, number>;
  /** JSON array of transports. */
  transports: ColumnType<string, string | undefined, string>;
  backed_up: ColumnType<number, number | undefined, number>;
  last_used_at: Timestamp | null;
  created_at: Timestamp;
}

export interface KnownDevicesTable {
  id: Generated<number>;
  user_id: number;
  /** SHA-256 hex of what identifies the device (modules/alerts). */
  fingerprint: string;
  created_at: Timestamp;
  last_seen_at: Timestamp;
}

export interface EmailChangesTable {
  id: Generated<number>;
  user_id: number;
  new_email: string;
  /** SHA-256 hex of the token in the link mailed to the new address. */
  token_hash: string;
  /** SHA-256 hex of the token in the cancel link mailed to the old address. */
  cancel_token_hash: string;
  expires_at: Timestamp;
  created_at: Timestamp;
}

/** An account's link to an OpenID Connect provider (modules/identities). */
export interface IdentitiesTable {
  id: Generated<number>;
  user_id: number;
  /** The provider's name in OIDC_PROVIDERS. */
  provider: string;
  /** The ID token's `sub` at that provider. */
  subject: string;
  email: string | null;
  created_at: Timestamp;
  last_used_at: Timestamp | null;
}

export interface AuditLogsTable {
  id: Generated<number>;
  user_id: number | null;
  actor_name: string;
  actor_email: string;
  action: string;
  subject_type: string;
  subject_id: string | null;
  subject_label: string;
  /** JSON object of what changed (field names, never secret values). */
  details: string;
  ip: string | null;
  created_at: Timestamp;
}

export interface PasswordResetTokensTable {
  /** Lower-cased address; one pending token per address. */
  email: string;
  /** SHA-256 hex of the token mailed in the link. */
  token: string;
  created_at: Timestamp;
}

export interface RememberTokensTable {
  id: Generated<number>;
  user_id: number;
  selector: string;
  /** SHA-256 hex of the validator half of the cookie. */
  validator_hash: string;
  expires_at: Timestamp;
  last_used_at: Timestamp | null;
  created_at: Timestamp;
}

export interface RateLimitsTable {
  bucket: string;
  hits: number;
  /** Milliseconds since the epoch when the bucket's window ends. */
  reset_at: number;
}

/** Maintained by triggers (migration 2026_11_22_700001): posts per status and locale. */
export interface PostCountsTable {
  status: string;
  locale: string;
  n: number;
}

/** An image uploaded in the panel (modules/media): the stored bytes, addressed by their SHA-256. */
export interface MediaTable {
  id: Generated<number>;
  hash: string;
  type: 'png' | 'jpeg' | 'webp' | 'gif' | 'avif';
  name: string;
  size: number;
  width: number;
  height: number;
  data: Buffer;
  uploaded_by: number | null;
  created_at: Timestamp;
}

export interface Database {
  users: UsersTable;
  personal_access_tokens: PersonalAccessTokensTable;
  posts: PostsTable;
  post_counts: PostCountsTable;
  settings: SettingsTable;
  sessions: SessionsTable;
  password_reset_tokens: PasswordResetTokensTable;
  remember_tokens: RememberTokensTable;
  audit_logs: AuditLogsTable;
  rate_limits: RateLimitsTable;
  passkeys: PasskeysTable;
  known_devices: KnownDevicesTable;
  email_changes: EmailChangesTable;
  identities: IdentitiesTable;
  media: MediaTable;
}

export type User = Selectable<UsersTable>;
export type NewUser = Insertable<UsersTable>;
export type UserUpdate = Updateable<UsersTable>;
export type TokenRow = Selectable<PersonalAccessTokensTable>;
export type Post = Selectable<PostsTable>;
export type NewPost = Insertable<PostsTable>;
export type SettingRow = Selectable<SettingsTable>;
export type AuditLogRow = Selectable<AuditLogsTable>;
export type Identity = Selectable<IdentitiesTable>;
