// A user's browser sessions as the security page shows them (Jetstream's "Browser Sessions"):
// each active site session with its device, address and last activity, and the means to end one
// (all the others: AuthService.signOutOtherBrowsers). Ending a session also forgets its device's
// remember-me token, or the cookie would log that browser straight back in.
//
// Sessions are named by a handle, the SHA-256 of their id, never by the id itself: the page
// must not print the secret half of another browser's cookie.
import { createHash } from 'node:crypto';
import type { Kysely } from 'kysely';
import { statement, type Arg, type Db } from '../../db/connect.js';
import type { Database } from '../../db/types.js';
import type { MaybePromise } from '../../lib/maybe-promise.js';
import type { RememberService } from '../remember/remember.service.js';
import { deviceOf, type Device } from './device.js';

export type BrowserSession = {
  handle: string;
  device: Device;
  ip: string | null;
  /** The row's last save: a request of the session saves it at most once per touch interval (session-store.ts). */
  lastActiveAt: string;
  current: boolean;
};

/** The public name of a session id. */
export function sessionHandle(sessionId: string): string {
  return createHash('sha256').update(sessionId).digest('hex').slice(0, 32);
}

function rememberSelectorIn(payload: string): string | null {
  try {
    const data: unknown = JSON.parse(payload);
    const selector = typeof data === 'object' && data !== null ? (data as { rememberSelector?: unknown }).rememberSelector : undefined;
    return typeof selector === 'string' ? selector : null;
  } catch {
    return null;
  }
}

// The user's sessions not past their idle end at `now`, latest used first; with `since`, only
// those begun after it (an absolute lifetime).
function aliveSessions(kysely: Kysely<Database>, userId: number, now: string, since?: string) {
  let query = kysely.selectFrom('sessions').select(['id', 'ip', 'user_agent', 'updated_at', 'created_at', 'expires_at']).where('user_id', '=', userId).where('expires_at', '>', now);
  if (since !== undefined) query = query.where('created_at', '>', since);
  return query.orderBy('updated_at', 'desc');
}

const aliveOfUser = statement('browser_sessions_of_user', (kysely, arg: Arg<{ userId: number; now: string }>) => aliveSessions(kysely, arg('userId'), arg('now')));
const aliveBegunSince = statement('browser_sessions_of_user_since', (kysely, arg: Arg<{ userId: number; now: string; since: string }>) =>
  aliveSessions(kysely, arg('userId'), arg('now'), arg('since')),
);

type AliveRow = Awaited<ReturnType<typeof aliveOfUser.all>>[number];
/** A user's sessions alive when read, latest used first, and until when that holds if nothing is written: the first end among them (ms, null for none). */
export type AliveSessions = { rows: readonly AliveRow[]; until: number | null };

/**
 * Reads a user's sessions alive now: not past their idle end, nor, with an absolute lifetime
 * (`absoluteMinutes` > 0), begun longer ago than that. The security page is handed a kept one
 * (http/web/browser-sessions.ts), which holds until the first of them ends.
 */
export function aliveSessionsOf(db: Db, absoluteMinutes: number, clock: () => number = Date.now): (userId: number) => Promise<AliveSessions> {
  const time = (value: unknown) => (value instanceof Date ? value.getTime() : Date.parse(String(value)));
  return async (userId) => {
    const now = clock();
    const alive = { userId, now: new Date(now).toISOString() };
    const rows =
      absoluteMinutes > 0
        ? await aliveBegunSince.all(db, { ...alive, since: new Date(now - absoluteMinutes * 60_000).toISOString() })
        : await aliveOfUser.all(db, alive);
    let until: number | null = null;
    for (const row of rows) {
      const idleEnd = time(row.expires_at);
      const end = absoluteMinutes > 0 && row.created_at !== null ? Math.min(idleEnd, time(row.created_at) + absoluteMinutes * 60_000) : idleEnd;
      if (until === null || end < until) until = end;
    }
    return { rows, until };
  };
}

export class BrowserSessionService {
  private readonly alive: (userId: number) => MaybePromise<AliveSessions>;

  constructor(
    private readonly db: Db,
    private readonly remember: Pick<RememberService, 'forgetSelectors'>,
    /** Minutes after its creation that a session ends however active (as the store has it); 0 = no limit. */
    absoluteMinutes = 0,
    clock: () => number = Date.now,
    alive?: (userId: number) => MaybePromise<AliveSessions>,
  ) {
    this.alive = alive ?? aliveSessionsOf(db, absoluteMinutes, clock);
  }

  /** The user's site sessions that are still alive, this one first, then the latest used. */
  async list(userId: number, currentId: string | undefined): Promise<BrowserSession[]> {
    const { rows } = await this.alive(userId);
    const sessions = rows.map((row) => ({
      handle: sessionHandle(row.id),
      device: deviceOf(row.user_agent),
      ip: row.ip,
      lastActiveAt: row.updated_at ?? row.created_at ?? '',
      current: row.id === currentId,
    }));
    return [...sessions.filter((s) => s.current), ...sessions.filter((s) => !s.current)];
  }

  /**
   * Ends one of the user's sessions (by handle) and forgets its device's remember-me token.
   * False when the user has no such session: another user's handle ends nothing, and neither
   * does this session's own (the logout button ends it).
   */
  async end(userId: number, handle: string, currentId: string): Promise<boolean> {
    const rows = await this.db.kysely.selectFrom('sessions').select(['id', 'payload']).where('user_id', '=', userId).where('id', '!=', currentId).execute();
    const row = rows.find((candidate) => sessionHandle(candidate.id) === handle);
    if (row === undefined) return false;
    await this.db.kysely.deleteFrom('sessions').where('id', '=', row.id).where('user_id', '=', userId).execute();
    const selector = rememberSelectorIn(row.payload);
    if (selector !== null) await this.remember.forgetSelectors(userId, [selector]);
    return true;
  }
}
