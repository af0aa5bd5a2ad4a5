// What the app adds to Fastify's types: the shared objects, the per-route guard declaration
// and the authenticated caller.
import type { Config } from '../config.js';
import type { Db } from '../db/connect.js';
import type { Ability } from '../modules/tokens/abilities.js';
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

/** The caller of an API route: its user and, when authenticated by a token, that token. */
export type ApiCaller = Readonly<{
  user: Readonly<AuthUser>;
  /** Null when the caller came with a first-party session cookie instead of a token. */
  tokenId: number | null;
  abilities: readonly string[];
}>;

declare module 'fastify' {
  interface FastifyInstance {
    config: Config;
    db: Db;
    services: Services;
  }
  interface FastifyContextConfig {
    auth?: RouteAuth;
    /**
     * A session step a first-party SPA calls across origins (login, the two-factor code, the
     * password confirmation…): CORS with credentials for the SANCTUM_STATEFUL_DOMAINS origins
     * (plugins/cors.ts reads it as the route is added). Static paths only.
     */
    spa?: boolean;
  }
  interface FastifyRequest {
    caller: ApiCaller | null;
  }
}
