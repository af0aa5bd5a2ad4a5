// The OpenID Connect relying party: discovery of each provider of OIDC_PROVIDERS, the
// authorization URL of a sign-in (code flow, PKCE S256, state, nonce), and the callback's
// verification. Every check of the protocol — the authorization response's state and iss, the
// code exchange, the ID token's signature through the provider's JWKS, iss, aud, exp, nonce and
// auth_time — is openid-client's (panva); this file only chooses the checks and maps failures to
// the few reasons a person is told. Nothing here logs or returns a token or a code.
import * as client from 'openid-client';
import type { OidcProviderConfig } from '../../config.js';
import type { ProviderClaims } from '../identities/identities.service.js';

/** Why a provider sign-in failed, as the login page tells it. */
export type OidcFailure =
  /** Discovery, the token endpoint or the JWKS could not be reached. */
  | 'unreachable'
  /** The person refused (error=access_denied). */
  | 'denied'
  /** No sign-in under way in this browser, or another one's state (a replay, a forged link). */
  | 'state'
  /** The provider's answer did not verify (an error, a bad ID token: signature, iss, aud, exp, nonce). */
  | 'rejected'
  /** The ID token verified but names no email (an account cannot be made). */
  | 'no-email';

export class OidcError extends Error {
  constructor(
    readonly reason: OidcFailure,
    /** What may be logged: an error code and message, never a token, code or secret. */
    readonly detail: string,
  ) {
    super(`OIDC sign-in failed (${reason}): ${detail}`);
    this.name = 'OidcError';
  }
}

/** A sign-in under way, kept in the browser's session between the redirect and the callback. */
export type PendingAuthorization = {
  provider: string;
  state: string;
  nonce: string;
  codeVerifier: string;
  /** Seconds: the ID token's auth_time must be this recent (a confirmation asks for a fresh login). */
  maxAge?: number;
};

type Log = { warn(details: Record<string, unknown>, message: string): void; info(details: Record<string, unknown>, message: string): void };

type Discovered = { config: client.Configuration | null; pending: Promise<client.Configuration> | null; failures: number; retryAt: number };

/** Waits after a failed discovery before the next try: 1 s, 2 s, 4 s … at most 5 minutes. */
const RETRY_BASE_MS = 1000;
const RETRY_MAX_MS = 5 * 60_000;
/** Seconds any request to a provider may take. */
const REQUEST_TIMEOUT_S = 10;

export class OidcService {
  private readonly discovered = new Map<string, Discovered>();

  constructor(
    private readonly providers: readonly OidcProviderConfig[],
    private readonly appUrl: string,
    private readonly log: Log,
    /** Plain http to a loopback issuer (config.ts allows it outside production only). */
    private readonly allowHttp: boolean,
  ) {}

  /** The providers, in the order OIDC_PROVIDERS lists them, for the buttons. */
  list(): { name: string; label: string }[] {
    return this.providers.map(({ name, label }) => ({ name, label }));
  }

  provider(name: string): OidcProviderConfig | undefined {
    return this.providers.find((provider) => provider.name === name);
  }

  /** The redirect URI to register at the provider. */
  redirectUri(name: string): string {
    return `${this.appUrl}/auth/${name}/callback`;
  }

  /** Discovers every provider now; a failure is logged and tried again later, never thrown. */
  async warm(): Promise<void> {
    await Promise.all(this.providers.map((provider) => this.configuration(provider).catch(() => undefined)));
  }

  /**
   * A new authorization: the URL to send the browser to, and what the callback needs (kept in the
   * session, never in the URL beyond the state). `fresh` asks the provider to authenticate the
   * person again (prompt=login, max_age=0) and the callback to check it did (auth_time).
   */
  async start(name: string, options: { fresh?: boolean } = {}): Promise<{ url: string; pending: PendingAuthorization }> {
    const provider = this.require(name);
    const config = await this.configuration(provider);
    const codeVerifier = client.randomPKCECodeVerifier();
    const pending: PendingAuthorization = { provider: name, state: client.randomState(), nonce: client.randomNonce(), codeVerifier };
    const parameters: Record<string, string> = {
      redirect_uri: this.redirectUri(name),
      scope: provider.scopes.join(' '),
      code_challenge: await client.calculatePKCECodeChallenge(codeVerifier),
      code_challenge_method: 'S256',
      state: pending.state,
      nonce: pending.nonce,
    };
    if (options.fresh === true) {
      parameters.prompt = 'login';
      parameters.max_age = '0';
      // Clocks differ and the person takes time to type: a login in the last five minutes is fresh.
      pending.maxAge = 300;
    }
    return { url: client.buildAuthorizationUrl(config, parameters).href, pending };
  }

  /**
   * The callback: the query the provider sent back to the redirect URI, checked against the
   * pending authorization, the code exchanged, the ID token verified; the person's claims (the
   * userinfo endpoint fills in an email the ID token leaves out, for the same subject only).
   */
  async finish(pending: PendingAuthorization, query: URLSearchParams): Promise<ProviderClaims> {
    const provider = this.require(pending.provider);
    const error = query.get('error');
    if (error !== null) throw new OidcError(error === 'access_denied' ? 'denied' : 'rejected', `authorization error ${error.slice(0, 64)}`);
    const config = await this.configuration(provider);
    const currentUrl = new URL(this.redirectUri(pending.provider));
    currentUrl.search = query.toString();
    let tokens: Awaited<ReturnType<typeof client.authorizationCodeGrant>>;
    try {
      tokens = await client.authorizationCodeGrant(config, currentUrl, {
        pkceCodeVerifier: pending.codeVerifier,
        expectedState: pending.state,
        expectedNonce: pending.nonce,
        idTokenExpected: true,
        ...(pending.maxAge === undefined ? {} : { maxAge: pending.maxAge }),
      });
    } catch (caught) {
      throw failure(caught);
    }
    const idToken = tokens.claims();
    if (idToken === undefined) throw new OidcError('rejected', 'no ID token');
    let email = typeof idToken.email === 'string' ? idToken.email : null;
    let verified = idToken.email_verified === true;
    let name = typeof idToken.name === 'string' ? idToken.name : null;
    if (email === null && config.serverMetadata().userinfo_endpoint !== undefined) {
      try {
        const info = await client.fetchUserInfo(config, tokens.access_token, idToken.sub);
        email = typeof info.email === 'string' ? info.email : null;
        verified = info.email_verified === true;
        name ??= typeof info.name === 'string' ? info.name : null;
      } catch (caught) {
        throw failure(caught);
      }
    }
    return { provider: pending.provider, subject: idToken.sub, email, emailVerified: verified, name };
  }

  private require(name: string): OidcProviderConfig {
    const provider = this.provider(name);
    if (provider === undefined) throw new OidcError('state', `unknown provider ${name}`);
    return provider;
  }

  /**
   * The provider's discovered configuration, fetched once. A failed discovery is logged and not
   * tried again before its back-off ends (1 s doubling to 5 minutes), so a provider that is down
   * neither stops the start nor is hammered by every click; the next sign-in after that tries again.
   */
  private async configuration(provider: OidcProviderConfig): Promise<client.Configuration> {
    let entry = this.discovered.get(provider.name);
    if (entry === undefined) {
      entry = { config: null, pending: null, failures: 0, retryAt: 0 };
      this.discovered.set(provider.name, entry);
    }
    if (entry.config !== null) return entry.config;
    if (entry.pending !== null) return entry.pending;
    if (Date.now() < entry.retryAt) throw new OidcError('unreachable', 'discovery failed recently, waiting to try again');
    const current = entry;
    const discovery = this.discover(provider).then(
      (config) => {
        current.config = config;
        current.failures = 0;
        current.pending = null;
        this.log.info({ provider: provider.name }, 'OIDC provider discovered');
        return config;
      },
      (caught: unknown) => {
        current.failures += 1;
        current.retryAt = Date.now() + Math.min(RETRY_BASE_MS * 2 ** (current.failures - 1), RETRY_MAX_MS);
        current.pending = null;
        const error = failure(caught);
        this.log.warn({ provider: provider.name, issuer: provider.issuer, reason: error.detail, retryInMs: current.retryAt - Date.now() }, 'OIDC provider discovery failed; will try again');
        throw new OidcError('unreachable', error.detail);
      },
    );
    current.pending = discovery;
    return discovery;
  }

  private discover(provider: OidcProviderConfig): Promise<client.Configuration> {
    const http = this.allowHttp && new URL(provider.issuer).protocol === 'http:';
    // openid-client trusts an ID token from the token endpoint on the strength of TLS alone (OIDC
    // Core 3.1.3.7 allows it) and skips its signature. Checked here all the same, against the
    // provider's JWKS: a TLS-intercepting proxy, a mis-issued certificate or the loopback http of
    // development would otherwise be enough to hand the app any subject.
    const execute = http ? [client.allowInsecureRequests, client.enableNonRepudiationChecks] : [client.enableNonRepudiationChecks];
    return client.discovery(new URL(provider.issuer), provider.clientId, provider.clientSecret, client.ClientSecretPost(provider.clientSecret), {
      timeout: REQUEST_TIMEOUT_S,
      execute,
    });
  }
}

/** An openid-client failure as a reason and a loggable line (its code and message, nothing of the response). */
function failure(caught: unknown): OidcError {
  if (caught instanceof OidcError) return caught;
  const error = caught as { name?: unknown; code?: unknown; message?: unknown; cause?: unknown };
  const code = typeof error.code === 'string' ? error.code : typeof error.name === 'string' ? error.name : 'Error';
  const message = typeof error.message === 'string' ? error.message.slice(0, 200) : '';
  // fetch's own failures (refused, timed out, no such host) are the provider being away.
  const network = error.name === 'TypeError' || error.name === 'AbortError' || error.name === 'TimeoutError' || code === 'OAUTH_TIMEOUT';
  return new OidcError(network ? 'unreachable' : 'rejected', `${code}: ${message}`);
}
