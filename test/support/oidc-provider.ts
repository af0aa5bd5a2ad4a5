// A real OpenID Connect provider on loopback for the tests: panva's oidc-provider (the certified
// implementation) with its own signing key, one confidential client registered for the app under
// test, and its development login and consent pages (any login name is an account; its claims are
// what the test set). `tamper` re-signs the next ID tokens the token endpoint returns, to play a
// provider (or a man in the middle) that answers with a forged, expired or misdirected token.
// `drive` plays a browser without JavaScript through the provider's pages, for inject-based tests.
import { generateKeyPairSync, randomBytes } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import { createServer as createHttpsServer } from 'node:https';
import type { AddressInfo } from 'node:net';
import { decodeJwt, importJWK, SignJWT, type JWK, type JWTPayload } from 'jose';
import Provider from 'oidc-provider';

export type AccountClaims = { email?: string; email_verified?: boolean; name?: string };

/** How the next ID tokens are spoiled: signed with another key, for another client, … */
export type Tamper = 'forged-key' | 'wrong-audience' | 'wrong-nonce' | 'wrong-issuer' | 'expired';

export type TestProvider = {
  issuer: string;
  clientId: string;
  clientSecret: string;
  /** The variables that configure the app for this provider under `name`. */
  env(name: string, extra?: Record<string, string>): Record<string, string>;
  /** What an account (a login name at the provider) says about itself. */
  accounts: Map<string, AccountClaims>;
  tamper: Tamper | null;
  /** The ID tokens the token endpoint issued (to check none appears in a log or a page). */
  issuedTokens: string[];
  /** Follows an authorization URL through the login and consent pages: the URL the provider sends the browser back to. */
  drive(authorizationUrl: string, account: string | { abort: true }): Promise<URL>;
  close(): Promise<void>;
};

function signingKey(): JWK {
  const { privateKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
  return { ...(privateKey.export({ format: 'jwk' }) as JWK), kid: 'test-key', alg: 'RS256', use: 'sig' };
}

/** Starts the provider on a loopback port (a free one unless given); `redirectUris` are the app's callbacks. */
export async function startTestProvider(redirectUris: string[], options: { port?: number; tls?: { key: string; cert: string } } = {}): Promise<TestProvider> {
  // With `tls`, an https issuer at localhost (the certificate's name), as a company's provider with a private CA.
  const server: Server = options.tls === undefined ? createServer() : createHttpsServer(options.tls);
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port ?? 0, '127.0.0.1', resolve);
  });
  const port = (server.address() as AddressInfo).port;
  const issuer = options.tls === undefined ? `http://127.0.0.1:${port}` : `https://localhost:${port}`;
  const clientId = 'tessera-test';
  const clientSecret = randomBytes(24).toString('hex');
  const jwk = signingKey();
  const accounts = new Map<string, AccountClaims>();
  const provider = new Provider(issuer, {
    clients: [
      { client_id: clientId, client_secret: clientSecret, redirect_uris: redirectUris, token_endpoint_auth_method: 'client_secret_post', grant_types: ['authorization_code'], response_types: ['code'] },
    ],
    jwks: { keys: [jwk] },
    cookies: { keys: [randomBytes(16).toString('hex')] },
    claims: { openid: ['sub'], email: ['email', 'email_verified'], profile: ['name'] },
    pkce: { required: () => true },
    features: { devInteractions: { enabled: true } },
    findAccount: (_ctx, id) => ({ accountId: id, claims: () => ({ sub: id, ...(accounts.get(id) ?? {}) }) }),
  });
  const state: { tamper: Tamper | null; issuedTokens: string[] } = { tamper: null, issuedTokens: [] };
  const realKey = await importJWK(jwk, 'RS256');
  const otherKey = await importJWK(signingKey(), 'RS256');
  // After the token endpoint answered: keep the ID token, or spoil it as asked.
  provider.use(async (ctx, next) => {
    await next();
    if (ctx.path !== '/token' || ctx.status !== 200) return;
    const body = ctx.body as { id_token?: string };
    if (typeof body.id_token !== 'string') return;
    state.issuedTokens.push(body.id_token);
    if (state.tamper === null) return;
    const claims: JWTPayload = { ...decodeJwt(body.id_token) };
    const now = Math.floor(Date.now() / 1000);
    if (state.tamper === 'wrong-audience') claims.aud = 'another-client';
    if (state.tamper === 'wrong-nonce') claims.nonce = 'not-the-nonce';
    if (state.tamper === 'wrong-issuer') claims.iss = 'http://127.0.0.1:1';
    if (state.tamper === 'expired') Object.assign(claims, { iat: now - 7200, exp: now - 3600 });
    const key = state.tamper === 'forged-key' ? otherKey : realKey;
    body.id_token = await new SignJWT(claims).setProtectedHeader({ alg: 'RS256', kid: 'test-key', typ: 'JWT' }).sign(key);
    ctx.body = body;
  });
  const handle = provider.callback();
  server.on('request', (request, response) => void handle(request, response));

  const drive = async (authorizationUrl: string, account: string | { abort: true }): Promise<URL> => {
    const cookies = new Map<string, string>();
    const send = async (url: string, form?: Record<string, string>): Promise<string> => {
      const response = await fetch(url, {
        redirect: 'manual',
        method: form === undefined ? 'GET' : 'POST',
        headers: { cookie: [...cookies].map(([k, v]) => `${k}=${v}`).join('; '), ...(form === undefined ? {} : { 'content-type': 'application/x-www-form-urlencoded' }) },
        body: form === undefined ? undefined : new URLSearchParams(form).toString(),
      });
      for (const line of response.headers.getSetCookie()) {
        const [pair = ''] = line.split(';');
        const at = pair.indexOf('=');
        cookies.set(pair.slice(0, at), pair.slice(at + 1));
      }
      await response.arrayBuffer();
      const location = response.headers.get('location');
      if (location === null) throw new Error(`the provider answered ${response.status} without a redirect at ${url}`);
      return new URL(location, url).href;
    };
    let next = await send(authorizationUrl);
    for (let step = 0; step < 10; step += 1) {
      const url = new URL(next);
      if (url.origin !== issuer) return url;
      const interaction = /^\/interaction\/([^/]+)$/.exec(url.pathname);
      if (interaction === null) {
        next = await send(next);
        continue;
      }
      if (typeof account !== 'string') {
        next = await send(`${next}/abort`);
        continue;
      }
      // The login page first, then the consent page: each is a form posted back to the same URL.
      const page = await fetch(next, { headers: { cookie: [...cookies].map(([k, v]) => `${k}=${v}`).join('; ') } }).then((r) => r.text());
      const prompt = /name="prompt" value="(\w+)"/.exec(page)?.[1] ?? 'consent';
      next = await send(next, prompt === 'login' ? { prompt, login: account, password: 'any' } : { prompt });
    }
    throw new Error('the provider never sent the browser back');
  };

  return {
    issuer,
    clientId,
    clientSecret,
    accounts,
    get tamper() {
      return state.tamper;
    },
    set tamper(value: Tamper | null) {
      state.tamper = value;
    },
    issuedTokens: state.issuedTokens,
    env: (name, extra = {}) => {
      const prefix = `OIDC_${name.toUpperCase().replaceAll('-', '_')}_`;
      return { OIDC_PROVIDERS: name, [`${prefix}ISSUER`]: issuer, [`${prefix}CLIENT_ID`]: clientId, [`${prefix}CLIENT_SECRET`]: clientSecret, [`${prefix}LABEL`]: 'Corp ID', ...extra };
    },
    drive,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
