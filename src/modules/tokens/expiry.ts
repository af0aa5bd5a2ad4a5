// When a token stops working, by Sanctum's two rules: the global lifetime (SANCTUM_EXPIRATION)
// counted from its creation, and its own expires_at; whichever comes first.
import type { Message } from '../i18n/translator.js';

/** The moment (ms since the epoch) the token expires, or null when it never does. */
export function effectiveExpiry(createdAt: string, expiresAt: string | null, lifetimeMinutes: number | null): number | null {
  const byAge = lifetimeMinutes === null ? null : Date.parse(createdAt) + lifetimeMinutes * 60_000;
  const own = expiresAt === null ? null : Date.parse(expiresAt);
  if (byAge === null) return own;
  return own === null ? byAge : Math.min(byAge, own);
}

/**
 * A token's own expiry as asked for: a moment (the API's `expires_at`, RFC 3339) or a calendar
 * day (the tokens page's date field), which lasts to the end of that day in UTC, the zone every
 * time on the page is shown in.
 */
export type ExpiryRequest = { at: string } | { day: string };

const DAY_MS = 86_400_000;
const DAY = /^(\d{4})-(\d{2})-(\d{2})$/;

// A real calendar day (not 2026-02-30) at 00:00 UTC, or null.
function dayStart(day: string): number | null {
  const match = DAY.exec(day);
  if (match === null) return null;
  const start = Date.UTC(Number(match[1]), Number(match[2]) - 1, Number(match[3]));
  return new Date(start).toISOString().slice(0, 10) === day ? start : null;
}

/** When the global lifetime of a token made at `now` ends (ms since the epoch), or null without one. */
export function lifetimeEnd(now: number, lifetimeMinutes: number | null): number | null {
  return lifetimeMinutes === null ? null : now + lifetimeMinutes * 60_000;
}

/** The last day (YYYY-MM-DD, UTC) that may be chosen before `end`: a day that starts at it would give a token dead on arrival. */
export function lastDayBefore(end: number): string {
  return new Date(end - 1).toISOString().slice(0, 10);
}

/**
 * The own expiry (ms since the epoch) a request asks for, or the message that refuses it: not a
 * date, not in the future, or later than the global lifetime allows a token made now. A day
 * that the global lifetime ends within is cut to that end, as the token would stop then anyway.
 */
export function ownExpiry(request: ExpiryRequest, now: number, lifetimeMinutes: number | null): number | Message {
  const limit = lifetimeEnd(now, lifetimeMinutes);
  const start = 'day' in request ? dayStart(request.day) : Date.parse(request.at);
  if (start === null || Number.isNaN(start)) return { key: 'validation.date', attribute: 'expires_at' };
  const end = 'day' in request ? start + DAY_MS : start;
  if (end <= now) return { key: 'token_expiry.future', attribute: 'expires_at' };
  // A day's refusal names no date: the page's hint beside the field says it, in the reader's words.
  if (limit !== null && 'day' in request && start >= limit) return { key: 'token_expiry.beyond_limit_day', attribute: 'expires_at' };
  if (limit !== null && start > limit) return { key: 'token_expiry.beyond_limit', attribute: 'expires_at', replace: { date: new Date(limit).toISOString() } };
  return limit === null ? end : Math.min(end, limit);
}
