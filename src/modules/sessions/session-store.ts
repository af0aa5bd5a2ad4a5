// The session store behind @fastify/session: one row per session in the application database.
// The user ids are kept in their own columns so that every session of a user can be ended at
// once (password reset, account deletion) without reading payloads.
import type { Db } from '../../db/connect.js';
import { bookkeepingFailed } from '../../db/outage-log.js';
import type { MaybePromise } from '../../lib/maybe-promise.js';

/** A session as the store keeps it; @fastify/session hands its own Session, which says whether it changed. */
export type StoredSession = {
  /** `originalExpires`: the idle end the session had when it was read (set by @fastify/session's Cookie from the stored `expires`). */
  cookie?: { expires?: string | Date | null; originalExpires?: Date };
  userId?: number;
  adminUserId?: number;
  ip?: string;
  userAgent?: string;
  isModified?: () => boolean;
};

/** What get() reads of a session's row. */
export type SessionRow = Readonly<{ payload: string; expires_at: string; created_at: string | null }>;

/** Reads a session's row by id. */
export function sessionRows(db: Db): (sessionId: string) => Promise<SessionRow | undefined> {
  return (sessionId) => db.kysely.selectFrom('sessions').select(['payload', 'expires_at', 'created_at']).where('id', '=', sessionId).executeTakeFirst();
}

const text = (value: unknown, max: number): string | null => (typeof value === 'string' && value !== '' ? value.slice(0, max) : null);
type Callback = (error?: unknown) => void;
type GetCallback = (error: unknown, session?: StoredSession | null) => void;

export class DbSessionStore {
  /**
   * A session used again without a change is written again only once its idle end would move
   * by this much: a minute, or a tenth of a shorter lifetime. So a signed-in page is not a write
   * (a write also drops every kept read of this instance); the idle end lags the last request by
   * less than this.
   */
  readonly touchIntervalMs: number;

  constructor(
    private readonly db: Db,
    private readonly lifetimeMinutes: number,
    /** Minutes after its creation that a session ends whatever its activity; 0 = no limit. */
    private readonly absoluteMinutes = 0,
    /** How a row is read: the app passes the reader kept while the database is unchanged (src/perf/kept-reads.ts). */
    private readonly readRow: (sessionId: string) => MaybePromise<SessionRow | undefined> = sessionRows(db),
  ) {
    this.touchIntervalMs = Math.min(60_000, (lifetimeMinutes * 60_000) / 10);
  }

  /**
   * Saves the session. A save of a session whose content did not change only moves its idle
   * expiry forward (the lifetime is rolling), and only once per touch interval: bookkeeping, so a
   * failure of it (a full disk) is logged and dropped, and the page is answered all the same. A
   * save that carries a change (a sign-in, a CSRF secret, a flash message) is always written and
   * fails the request when it fails.
   */
  set(sessionId: string, session: StoredSession, callback: Callback): void {
    const idleRefresh = typeof session.isModified === 'function' && !session.isModified();
    const now = new Date();
    const cookieExpires = session.cookie?.expires;
    const expires = cookieExpires ? new Date(cookieExpires) : new Date(now.getTime() + this.lifetimeMinutes * 60_000);
    const stored = session.cookie?.originalExpires;
    if (idleRefresh && stored instanceof Date && expires.getTime() - stored.getTime() < this.touchIntervalMs) return callback();
    const row = {
      id: sessionId,
      user_id: typeof session.userId === 'number' ? session.userId : null,
      admin_user_id: typeof session.adminUserId === 'number' ? session.adminUserId : null,
      // In their own columns for the session list (the request notes them in the session).
      ip: text(session.ip, 45),
      user_agent: text(session.userAgent, 512),
      payload: JSON.stringify(session),
      expires_at: expires.toISOString(),
      updated_at: now.toISOString(),
      created_at: now.toISOString(),
    };
    this.db.kysely
      .insertInto('sessions')
      .values(row)
      .onConflict((oc) =>
        // created_at is not updated: the absolute lifetime counts from the session's first save.
        oc.column('id').doUpdateSet({
          user_id: row.user_id,
          admin_user_id: row.admin_user_id,
          ip: row.ip,
          user_agent: row.user_agent,
          payload: row.payload,
          expires_at: row.expires_at,
          updated_at: row.updated_at,
        }),
      )
      .execute()
      .then(
        () => callback(),
        (error: unknown) => {
          if (!idleRefresh) return callback(error);
          bookkeepingFailed(this.db, 'session idle time', error);
          callback();
        },
      );
  }

  get(sessionId: string, callback: GetCallback): void {
    const found = (row: SessionRow | undefined) => {
      if (row === undefined) return callback(null, null);
      // An idle session past its lifetime is gone, even if its cookie is replayed; so is one
      // past its absolute lifetime, however active.
      const now = Date.now();
      const tooOld = this.absoluteMinutes > 0 && row.created_at !== null && Date.parse(row.created_at) + this.absoluteMinutes * 60_000 <= now;
      if (Date.parse(row.expires_at) <= now || tooOld) {
        this.destroy(sessionId, () => callback(null, null));
        return;
      }
      // The row's idle end is the one that counts (set() compares the next one with it).
      const session = JSON.parse(row.payload) as StoredSession;
      session.cookie = { ...session.cookie, expires: row.expires_at };
      callback(null, session);
    };
    let row: MaybePromise<SessionRow | undefined>;
    try {
      row = this.readRow(sessionId);
    } catch (error) {
      return callback(error);
    }
    if (row instanceof Promise) row.then(found, callback);
    else found(row);
  }

  destroy(sessionId: string, callback: Callback): void {
    this.db.kysely
      .deleteFrom('sessions')
      .where('id', '=', sessionId)
      .execute()
      .then(() => callback(), callback);
  }

  /** Ends every browser session of the user (site and panel), but `exceptId` when given. */
  async destroyForUser(userId: number, exceptId?: string): Promise<void> {
    let query = this.db.kysely.deleteFrom('sessions').where((eb) => eb.or([eb('user_id', '=', userId), eb('admin_user_id', '=', userId)]));
    if (exceptId !== undefined) query = query.where('id', '!=', exceptId);
    await query.execute();
  }

  /** Deletes expired sessions (idle or past their absolute lifetime); returns how many. */
  async prune(): Promise<number> {
    const now = Date.now();
    const result = await this.db.kysely
      .deleteFrom('sessions')
      .where((eb) => {
        const idle = eb('expires_at', '<=', new Date(now).toISOString());
        return this.absoluteMinutes > 0 ? eb.or([idle, eb('created_at', '<=', new Date(now - this.absoluteMinutes * 60_000).toISOString())]) : idle;
      })
      .executeTakeFirst();
    return Number(result.numDeletedRows);
  }
}
