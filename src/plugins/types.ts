// The request and session contract: everything the app adds to Fastify's types — the shared
// objects, the route declarations, what a request carries once the plugins have run, what a
// reply can do, and every key a browser session may hold — declared here and nowhere else
// (test/unit/layout.test.ts refuses a `declare module 'fastify'` in any other file). A new
// session key or request field is added here, with the reason it exists.
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Config } from '../config.js';
import type { Db } from '../db/connect.js';
import type { User } from '../db/types.js';
import type { ErrorBody } from '../http/shared/schemas.js';
import type { TwoFactorChallenge } from '../modules/auth/two-factor-challenge.js';
import type { PendingAuthorization } from '../modules/oidc/oidc.service.js';
import type { PendingChallenge } from '../modules/passkeys/passkeys.service.js';
import type { SiteSettings } from '../modules/settings/site.js';
import type { Ability } from '../modules/tokens/abilities.js';
import type { TokenCredentials } from '../modules/tokens/token-string.js';
import type { AuthUser } from '../modules/users/auth-user.js';
import type { Services } from '../services.js';

/**
 * Who may call a route. Every route declares one (an undeclared guard fails at start-up):
 * - public: anyone; `optional-token` reads a bearer token when one is sent;
 * - token: a valid bearer token, optionally carrying an ability.
 */
export type RouteAuth = 'public' | 'optional-token' | 'token' | { ability: Ability } | WebAuth;

/**
 * Who may open a page or post a form:
 * - public: anyone; guest: only visitors who are not logged in (else → /dashboard);
 * - user: a logged-in user (else → /login, remembering the page); verified: also a verified
 *   email when MUST_VERIFY_EMAIL is on (else → /email/verify);
 * - admin-guest: the panel's login page; admin: the panel (its own session guard and
 *   canAccessPanel(user); visitors → /admin/login, other users → 403).
 * Every unsafe method (POST, PUT, PATCH, DELETE) of a page route is also CSRF-checked.
 */
export type WebAuth = 'guest' | 'user' | 'verified' | 'admin-guest' | 'admin';

/**
 * Who may keep a GET route's answers (plugins/http-cache.ts reads it as the route is added).
 * `{ public: seconds }`: the route's 200s that set no cookie carry a weak ETag of their body, and
 * a matching If-None-Match gets an empty 304. Such an answer may be kept by anyone, browsers and
 * shared caches, for that long (0: revalidated on every use) when the request carries no session
 * (no session or remember-me cookie, no Authorization header); every other answer of the route
 * is `no-store`. A route that declares nothing is kept by no one: pages are sent `no-store`
 * (views.ts), the rest as the route sends them.
 */
export type RouteCache = { public: number };

/** The caller of an API route: its user and, when authenticated by a token, that token. */
export type ApiCaller = Readonly<{
  user: Readonly<AuthUser>;
  /** Null when the caller came with a first-party session cookie instead of a token. */
  tokenId: number | null;
  abilities: readonly string[];
}>;

/**
 * A hook that resolves an API caller some other way (first-party session cookies); null if none.
 * Resolvers are asked only when a request carries a Cookie header and no Authorization header.
 */
export type CallerResolver = (request: FastifyRequest, reply: FastifyReply) => Promise<ApiCaller | null>;

/** Tried when the site session has no logged-in user (the remember-me cookie); null if none. */
export type SiteUserResolver = (request: FastifyRequest, reply: FastifyReply) => Promise<User | null>;

/** A public page as its route reads it: the template, its data, and until when it holds without a write (ms since the epoch; null: until a write). */
export type PublicPageBuild = { template: string; data: Record<string, unknown>; until: number | null };

/** Renders a browser error page for a status and its envelope. */
export type ErrorPageRenderer = (request: FastifyRequest, reply: FastifyReply, status: number, body: ErrorBody) => unknown;

/** A section of the security page, added by the route file of its feature (addSecuritySection). */
export type SecuritySection = {
  /** Position on the page: lower first. */
  order: number;
  /** The partial that renders it (a template under src/views). */
  template: string;
  /** What the partial needs, for this user and request. */
  load(request: FastifyRequest, user: User): Promise<Record<string, unknown>>;
};

/** Another way to confirm on the password confirmation page (a passkey, a provider). */
export type ConfirmExtra = { template: string; load(request: FastifyRequest): Promise<Record<string, unknown> | null> };

/** What a provider round trip is for: signing in (or up), linking to the signed-in account, confirming it. */
export type OidcIntent = 'login' | 'link' | 'confirm';

/** The session's side of a pending provider authorization: what it is for, and for whom. */
export type PendingOidc = PendingAuthorization & {
  intent: OidcIntent;
  /** The signed-in user a link or a confirmation is for. */
  userId: number | null;
  /** A page of a first-party SPA's origin to land on after signing in (SANCTUM_STATEFUL_DOMAINS). */
  returnTo: string | null;
  startedAt: number;
};

/** What GET /metrics serves (plugins/metrics.ts): the text of every metric, this process's or the whole cluster's. */
export type MetricsExposition = { contentType: string; scrape(): Promise<string> };

/**
 * A form post held while its sender confirms the password: its path on this site, its fields
 * (never a password, a code or a token: the session is a stored row), when it was held, and
 * whether the confirmation page it led to was shown.
 */
export type ConfirmAction = { userId: number; path: string; fields: Record<string, string>; at: number; shown: boolean };

/** New recovery codes on their way to the one page that shows them (sealed: sessions are stored rows). */
type SealedCodes = { userId: number; sealed: string; at: number; shown: boolean };

declare module 'fastify' {
  interface FastifyInstance {
    config: Config;
    db: Db;
    services: Services;
    /** API callers without a bearer token, resolved in order (plugins/stateful.ts adds the SPA's). */
    apiCallerResolvers: CallerResolver[];
    /** Tried in order when the session has no logged-in user (e.g. the remember-me cookie). */
    siteUserFallbacks: SiteUserResolver[];
    /** Logs the user in on the site: new session id (no fixation), user id stored. */
    loginSite(request: FastifyRequest, user: Pick<User, 'id'>): Promise<void>;
    /** Renders a browser error page; the views plugin replaces the plain default of plugins/errors.ts. */
    renderErrorPage: ErrorPageRenderer;
    /** The security page's sections (http/web/security.ts), filled by the feature route files. */
    securitySections: SecuritySection[];
    /** The confirmation page's other ways to confirm (addConfirmExtra), filled by the feature route files. */
    confirmExtras: ConfirmExtra[];
    /** The metrics GET /metrics serves; null without METRICS_TOKEN (no route then). */
    metrics: MetricsExposition | null;
  }
  interface FastifyContextConfig {
    auth?: RouteAuth;
    /** Who may keep the route's answers, and for how long (RouteCache); undeclared, no one. */
    cache?: RouteCache;
    /**
     * A session step a first-party SPA calls across origins (login, the two-factor code, the
     * password confirmation…): CORS with credentials for the SANCTUM_STATEFUL_DOMAINS origins
     * (plugins/cors.ts reads it as the route is added). Static paths only.
     */
    spa?: boolean;
  }
  interface FastifyRequest {
    /** The caller of an /api route once its guard admitted it (token or first-party session). */
    caller: ApiCaller | null;
    /**
     * The bearer token of an /api request, parsed once, first thing (the rate limit buckets by
     * its id): null without an Authorization header, 'invalid' for another scheme or a malformed token.
     */
    credentials: TokenCredentials | 'invalid' | null;
    /** The user of the site session, resolved by the web guard (null when logged out). */
    siteUser: { id: number; name: string; email: string; email_verified_at: string | null; is_admin: number } | null;
    /** The saved locale of the logged-in user, when there is one. */
    siteUserLocale?: string;
    /** The user of the panel session, resolved by the admin guard. */
    adminUser: User | null;
    /** The site settings as this request read them (views.ts siteFor); null until read. */
    site: SiteSettings | null;
    /** The user a sign-in on this request has just authenticated (for the request's log line). */
    logUser: number | null;
  }
  interface FastifyReply {
    /** Renders `template` inside the site layout with the page context; status 200 unless given. */
    page(template: string, data?: Record<string, unknown>, status?: number): FastifyReply;
    /**
     * A page that is the same for every visitor without a session (the blog): `build` reads its
     * data; for such a visitor the rendered body is kept while the database is unchanged
     * (views.ts), for anyone else it is rendered as page() renders.
     */
    publicPage(build: () => Promise<PublicPageBuild>): Promise<FastifyReply>;
    /**
     * A guest's form page with no data of its own (/login): for a visitor without a session it is
     * rendered once and kept, each answer carrying its visitor's own CSRF token (views.ts); for
     * anyone else it is rendered as page() renders.
     */
    guestForm(template: string): Promise<FastifyReply>;
  }
  /** Every key a browser session may hold (stored as JSON in the sessions table). */
  interface Session {
    /** The user logged in on the site (browser guard). */
    userId?: number;
    /** The user logged in on the admin panel (its own guard). */
    adminUserId?: number;
    /** Where to go after login (the page first asked for). */
    intended?: string;
    /** One-request messages: status text and form errors with old input. */
    flash?: Record<string, unknown>;
    _csrf?: string;
    /** The address and browser the session was last used from (the security page's session list). */
    ip?: string;
    userAgent?: string;
    /** The selector of this device's remember-me token: ending the session forgets it too. */
    rememberSelector?: string;
    /** A sign-in waiting for its second factor (never the password, never a signed-in user). */
    twoFactorChallenge?: TwoFactorChallenge;
    /** When the password (or a passkey, or a provider) was last confirmed on the site, ms since the epoch. */
    passwordConfirmedAt?: number;
    /** Where to go once confirmed. */
    confirmIntended?: string;
    /** The form post that asked for the confirmation, sent again once confirmed (http/web/confirm-password.ts). */
    confirmAction?: ConfirmAction;
    /** The panel's password confirmation: which administrator, and when (ms since the epoch). */
    adminPasswordConfirmed?: { userId: number; at: number };
    /** The site's new recovery codes, once (`shown` after that page was rendered; then only the download is left). */
    twoFactorCodes?: SealedCodes;
    /** The panel's new recovery codes, once. */
    adminTwoFactorCodes?: SealedCodes;
    /** The passkey registration ceremony under way: its challenge, the user and the passkey's name. */
    passkeyRegistration?: PendingChallenge;
    /** The passkey sign-in (site or panel) or confirmation ceremony under way. */
    passkeyAuthentication?: PendingChallenge;
    /** The provider round trip under way (one at a time; used once by its callback). */
    oidc?: PendingOidc;
  }
}
