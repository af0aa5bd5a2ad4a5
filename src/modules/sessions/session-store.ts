// The session store behind @fastify/session: one row per session in the application database.
// The user ids are kept in their own columns so that every session of a user can be ended at
// once (password reset, account deletion) without reading payloads.
import type { Db } from '../../db/connect.js';
import { bookkeepingFailed } from '../../db/outage-log.js';

/** A session as the store keeps it; @fastify/session hands its own Session, which says whether it changed. */
export type StoredSession = {
  cookie?: { expires?: string | Date | null };
  userId?: number;
  adminUserId?: number;
  ip?: string;
  userAgent?: string;
  isModified?: () => boolean;
};

const text = (value: unknown, max: number): string | null => (typeof value === 'string' && value !== '' ? value.slice(0, max) : null);
type Callback = (error?: unknown) => void;
type GetCallback = (error: unknown, session?: StoredSession | null) => void;

export class DbSessionStore {
  constructor(
    private readonly db: Db,
    private readonly lifetimeMinutes: number,
    /** Minutes after its creation that a session ends whatever its activity; 0 = no limit. */
    private readonly absoluteMinutes = 0,
  ) {}

  /**
   * Saves the session. A save of a session whose content did not change only moves its idle
   * expiry forward (each request does it: the lifetime is rolling): bookkeeping, so a failure
   * of it (a full disk) is logged and dropped, and the page is answered all the same. A save
   * that carries a change (a sign-in, a CSRF secret, a flash message) fails the request.
   */
  set(sessionId: string, session: StoredSession, callback: Callback): void {
    const idleRefresh = typeof session.isModified === 'function' && !session.isModified();
    const now = new Date();
    const cookieExpires = session.cookie?.expires;
    const expires = cookieExpires ? new Date(cookieExpires) : new Date(now.getTime() + this.lifetimeMinutes * 60_000);
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
    this.db.kysely
      .selectFrom('sessions')
      .select(['payload', 'expires_at', 'created_at'])
      .where('id', '=', sessionId)
      .executeTakeFirst()
      .then((row) => {
        if (row === undefined) return callback(null, null);
        // An idle session past its lifetime is gone, even if its cookie is replayed; so is one
        // past its absolute lifetime, however active.
        const now = Date.now();
        const tooOld = this.absoluteMinutes > 0 && row.created_at !== null && Date.parse(row.created_at) + this.absoluteMinutes * 60_000 <= now;
        if (Date.parse(row.expires_at) <= now || tooOld) {
          this.destroy(sessionId, () => callback(null, null));
          return;
        }
        callback(null, JSON.parse(row.payload) as StoredSession);
      }, callback);
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
