// Security headers on every answer: pages get the full helmet set with a CSP that allows no
// inline script; the JSON API gets the few headers that matter for JSON.
//
// The headers are computed once, at start-up, with `helmet` (the library @fastify/helmet wraps)
// and copied onto each reply. @fastify/helmet rebuilds its middleware — parsing the CSP — on
// every request: measured at an eighth of the CPU of an authenticated API read.
import type { FastifyInstance } from 'fastify';
import fp from 'fastify-plugin';
import helmet, { type HelmetOptions } from 'helmet';

type HeaderMap = Record<string, string>;

/** The headers helmet would set with these options. */
export function helmetHeaders(options: Readonly<HelmetOptions>): HeaderMap {
  const headers: HeaderMap = {};
  const response = {
    setHeader: (name: string, value: string) => void (headers[name.toLowerCase()] = String(value)),
    removeHeader: (name: string) => void delete headers[name.toLowerCase()],
  };
  helmet(options)({} as never, response as never, () => undefined);
  return headers;
}

/**
 * The pages' headers. `formTargets`: the origins a form may lead to besides the site's own, the
 * OpenID providers' (a browser applies form-action to the redirect that answers a form, and
 * "Connect" and "Confirm with …" are forms answered with a redirect to the provider).
 */
export function pageHeaderOptions(https: boolean, formTargets: readonly string[] = []): HelmetOptions {
  return {
    // No inline script anywhere: every script is a file under /assets.
    contentSecurityPolicy: {
      directives: {
        defaultSrc: ["'self'"],
        scriptSrc: ["'self'"],
        styleSrc: ["'self'"],
        imgSrc: ["'self'", 'data:'],
        formAction: ["'self'", ...formTargets],
        frameAncestors: ["'none'"],
        objectSrc: ["'none'"],
        // No page sets a <base>; none may be injected either.
        baseUri: ["'none'"],
        upgradeInsecureRequests: https ? [] : null,
      },
    },
    frameguard: { action: 'deny' },
    referrerPolicy: { policy: 'strict-origin-when-cross-origin' },
    strictTransportSecurity: https,
  };
}

function apiHeaders(https: boolean): HeaderMap {
  return {
    'x-content-type-options': 'nosniff',
    'x-frame-options': 'DENY',
    // A JSON answer loads nothing and is never framed.
    'content-security-policy': "default-src 'none'; frame-ancestors 'none'",
    'referrer-policy': 'no-referrer',
    ...(https ? { 'strict-transport-security': 'max-age=31536000; includeSubDomains' } : {}),
  };
}

export const securityHeadersPlugin = fp(
  async (app: FastifyInstance) => {
    const https = app.config.appUrl.startsWith('https:');
    // A provider's authorization endpoint is at its issuer's origin (Google, Entra ID, Keycloak, Okta, GitLab).
    const providers = [...new Set(app.config.oidcProviders.map((provider) => new URL(provider.issuer).origin))];
    const page = helmetHeaders(pageHeaderOptions(https, providers));
    const api = apiHeaders(https);
    app.addHook('onRequest', (request, reply, done) => {
      const url = request.url;
      void reply.headers(url.startsWith('/api/') || url === '/api' ? api : page);
      done();
    });
  },
  { name: 'security-headers' },
);
