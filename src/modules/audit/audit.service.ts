// The audit log of the panel: every administrator action leaves one line saying who did what to
// which subject, and when. Lines record which fields changed, never their values, so a private
// setting or a password cannot end up in the log.
import { userInfo } from 'node:os';
import type { Db } from '../../db/connect.js';
import type { AuditLogRow, User } from '../../db/types.js';
import { paged, type Paginated } from '../admin/listing.js';
import { countAuditLogs, countAuditLogsMatching, insertAuditLog, listAuditLogs, listAuditLogsMatching, type AuditQuery } from './audit.repository.js';

export const AUDIT_ACTIONS = [
  'auth.login',
  'auth.token_issued',
  'admin.login',
  'admin.logout',
  'admin.created',
  'admin.promoted',
  'admin.demoted',
  'user.created',
  'user.updated',
  'user.deleted',
  'user.two_factor_reset',
  'account.deleted',
  'post.created',
  'post.updated',
  'post.published',
  'post.unpublished',
  'post.deleted',
  'setting.created',
  'setting.updated',
  'setting.deleted',
  'token.revoked',
  'tokens.revoked_all',
  'media.uploaded',
  'media.deleted',
] as const;
export type AuditAction = (typeof AUDIT_ACTIONS)[number];

export type AuditActor = Pick<User, 'id' | 'name' | 'email'>;
/** The command line as the actor of a line: no account, the OS user that ran it as its "email". */
export type CommandLineActor = { id: null; name: string; email: string };
/**
 * A change that came through the API rather than the panel: the token that made it, by its id
 * (never its secret), or null for a first-party SPA's session cookie.
 */
export type AuditChannel = { channel: 'api'; tokenId: number | null };
/** Who acts, from which address, and (when not the panel) through which channel: what a service needs to write the audit line of a change. */
export type Acting = { actor: AuditActor; ip: string | null; via?: AuditChannel };
export type AuditSubject = { type: 'user' | 'post' | 'setting' | 'token' | 'session' | 'media'; id?: string | number | null; label: string };
/** Field names that changed, counts and the like: never a secret or a value typed by an admin. */
export type AuditDetails = { fields?: string[]; count?: number; /** Through the API (AuditChannel), and its token's id. */ via?: 'api'; token?: number | null; /** A sign-in's way in ("password", "passkey+two-factor"…). */ method?: string };

/** The actor of a change made from the command line (npm run cli), named by the OS user running it. */
export function commandLineActor(): CommandLineActor {
  let osUser = 'unknown';
  try {
    osUser = userInfo().username;
  } catch {
    // No entry for this uid in the passwd database (some containers): the line still says "command line".
  }
  return { id: null, name: 'command line', email: osUser };
}

export type AuditEntry = {
  id: number;
  actor: { id: number | null; name: string; email: string };
  action: string;
  subject: { type: string; id: string | null; label: string };
  details: AuditDetails;
  ip: string | null;
  createdAt: string;
};

function decodeDetails(json: string): AuditDetails {
  try {
    const value: unknown = JSON.parse(json);
    return typeof value === 'object' && value !== null && !Array.isArray(value) ? (value as AuditDetails) : {};
  } catch {
    return {};
  }
}

function present(row: AuditLogRow): AuditEntry {
  return {
    id: row.id,
    actor: { id: row.user_id, name: row.actor_name, email: row.actor_email },
    action: row.action,
    subject: { type: row.subject_type, id: row.subject_id, label: row.subject_label },
    details: decodeDetails(row.details),
    ip: row.ip,
    createdAt: row.created_at,
  };
}

export class AuditService {
  constructor(private readonly db: Db) {}

  /** Writes one line. The actor's name and email are copied, so the line outlives the account. */
  async record(actor: AuditActor | CommandLineActor, action: AuditAction, subject: AuditSubject, details: AuditDetails = {}, ip: string | null = null): Promise<void> {
    await insertAuditLog(this.db.kysely, {
      user_id: actor.id,
      actor_name: actor.name.slice(0, 255),
      actor_email: actor.email.slice(0, 255),
      action,
      subject_type: subject.type,
      subject_id: subject.id === undefined || subject.id === null ? null : String(subject.id),
      subject_label: subject.label.slice(0, 255),
      details: JSON.stringify(details),
      ip: ip === null ? null : ip.slice(0, 45),
      created_at: new Date().toISOString(),
    });
  }

  /** Writes the line of a change made by `by`; one made through the API says so, with its token's id. */
  async recordBy(by: Acting, action: AuditAction, subject: AuditSubject, details: AuditDetails = {}): Promise<void> {
    const channel = by.via === undefined ? {} : { via: by.via.channel, token: by.via.tokenId };
    await this.record(by.actor, action, subject, { ...details, ...channel }, by.ip);
  }

  /** The newest lines, for the dashboard. */
  async latest(limit = 10): Promise<AuditEntry[]> {
    return (await listAuditLogs(this.db.kysely, limit, 0)).map(present);
  }

  /** One page of the log, newest first: the whole log, or the lines `query` narrows it to (audit.filters.ts). */
  async page(page: number, perPage: number, query?: AuditQuery): Promise<Paginated<AuditEntry>> {
    const kysely = this.db.kysely;
    if (query === undefined) return paged(page, perPage, () => countAuditLogs(kysely), async (limit, offset) => (await listAuditLogs(kysely, limit, offset)).map(present));
    return paged(page, perPage, () => countAuditLogsMatching(kysely, query), async (limit, offset) => (await listAuditLogsMatching(kysely, query, limit, offset)).map(present));
  }
}
