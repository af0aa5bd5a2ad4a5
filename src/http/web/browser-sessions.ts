// The security page's "Browser sessions" section (Jetstream's): the user's active site sessions
// with device, address and last activity, and the forms that end one of them or all the others.
// Both ask for a fresh password confirmation: whoever holds an unlocked browser must not be able
// to lock the owner out of their other devices.
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { formatRelative } from '../../modules/i18n/formats.js';
import { t, type Locale } from '../../modules/i18n/translator.js';
import { BrowserSessionService, type BrowserSession } from '../../modules/sessions/browser-sessions.service.js';
import { keptAliveSessions } from '../../perf/kept-reads.js';
import { done, field, localeFor } from '../shared/forms.js';
import { requirePasswordConfirmed } from './confirm-password.js';
import { rememberSelectorOf } from './remember.js';
import { addSecuritySection } from './security.js';

const PAGE = '/security';
const UNITS: [Intl.RelativeTimeFormatUnit, number][] = [
  ['day', 86_400_000],
  ['hour', 3_600_000],
  ['minute', 60_000],
];

/** "5 minutes ago" in the visitor's language; "Active now" within the minute. */
function lastActive(iso: string, locale: Locale, now: number): string {
  const elapsed = now - Date.parse(iso);
  if (!(elapsed >= 60_000)) return t(locale, 'sessions.active_now');
  for (const [unit, ms] of UNITS) if (elapsed >= ms) return formatRelative(locale, -Math.floor(elapsed / ms), unit);
  return t(locale, 'sessions.active_now');
}

function deviceText(session: BrowserSession, locale: Locale): string {
  const { browser, os } = session.device;
  if (browser !== null && os !== null) return t(locale, 'sessions.device', { browser, os });
  return browser ?? os ?? t(locale, 'sessions.unknown_device');
}

export async function browserSessionRoutes(app: FastifyInstance): Promise<void> {
  // Its list is a kept read (perf/kept-reads.ts), as the other lists of the security page are.
  const absolute = app.config.sessionAbsoluteLifetimeMinutes;
  const sessions = new BrowserSessionService(app.db, app.services.remember, absolute, Date.now, keptAliveSessions(app.db, absolute));
  const sessionId = (request: FastifyRequest): string => request.session.sessionId;

  addSecuritySection(app, {
    order: 30,
    template: '/security/sessions',
    load: async (request, user) => {
      const locale = localeFor(app, request);
      const now = Date.now();
      const list = (await sessions.list(user.id, sessionId(request))).map((session) => ({
        handle: session.handle,
        device: deviceText(session, locale),
        ip: session.ip ?? t(locale, 'sessions.unknown_ip'),
        lastActiveAt: session.lastActiveAt,
        lastActive: lastActive(session.lastActiveAt, locale, now),
        current: session.current,
      }));
      return { browserSessions: list, hasOtherSessions: list.some((session) => !session.current) };
    },
  });

  const guarded = { config: { auth: 'verified' as const }, preHandler: requirePasswordConfirmed(app) };

  app.post('/user/sessions/end', guarded, async (request, reply) => {
    const locale = localeFor(app, request);
    const ended = await sessions.end(request.siteUser!.id, field(request, 'session'), sessionId(request));
    return done(request, reply, PAGE, t(locale, ended ? 'sessions.ended' : 'sessions.not_found'));
  });

  app.post('/user/sessions/others', guarded, async (request, reply) => {
    // The account's owner of "sign out everywhere" (AuthService): pending changes go too.
    await app.services.auth.signOutOtherBrowsers(request.siteUser!.id, { sessionId: sessionId(request), rememberSelector: request.session.rememberSelector ?? rememberSelectorOf(request) });
    return done(request, reply, PAGE, t(localeFor(app, request), 'sessions.others_ended'));
  });
}
