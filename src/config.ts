// The only reader of process.env. Everything else receives the typed, frozen Config built here.
// Invalid values fail fast at start-up with a message naming the variable.
import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { isIP } from 'node:net';
import { availableParallelism } from 'node:os';
import { dirname, resolve } from 'node:path';

export type MailConfig = {
  mailer: 'smtp' | 'log';
  host: string;
  port: number;
  username: string | null;
  password: string | null;
  encryption: 'tls' | 'starttls' | 'none';
  fromAddress: string;
  fromName: string;
  /** The log mailer keeps this many of its newest mails in DATA_DIR/mail and deletes older ones (MAIL_LOG_KEEP). */
  logKeep: number;
};

/** One OpenID Connect provider of OIDC_PROVIDERS (docs/oidc.md). */
export type OidcProviderConfig = {
  /** The name in OIDC_PROVIDERS, in the routes (/auth/{name}/…) and in the identities table. */
  name: string;
  /** The issuer identifier; discovery reads `{issuer}/.well-known/openid-configuration`. */
  issuer: string;
  clientId: string;
  clientSecret: string;
  /** The button's text ("Continue with {label}"). */
  label: string;
  /** The scopes asked for, `openid` among them. */
  scopes: string[];
};

export type Config = {
  env: 'production' | 'development' | 'test';
  appName: string;
  appUrl: string;
  /** 32 bytes from APP_KEY; signs links and derives secrets. */
  appKey: Buffer;
  locale: string;
  host: string;
  port: number;
  databaseUrl: string;
  dataDir: string;
  logLevel: string;
  /** Token lifetime in minutes; null = never expires. */
  tokenExpirationMinutes: number | null;
  tokenPrefix: string;
  statefulDomains: string[];
  corsAllowedOrigins: string[];
  mustVerifyEmail: boolean;
  /** Seconds a password confirmation lasts before a sensitive action asks again (PASSWORD_TIMEOUT). */
  passwordTimeoutSeconds: number;
  /** The panel sends administrators without two-factor sign-in to set it up first (ADMIN_REQUIRE_2FA). */
  adminRequireTwoFactor: boolean;
  /** A sign-in from a device not seen before for the account mails the account (NEW_DEVICE_ALERTS). */
  newDeviceAlerts: boolean;
  sessionLifetimeMinutes: number;
  /**
   * The Domain of the session and remember-me cookies (SESSION_DOMAIN, Laravel's name), for a
   * first-party SPA on a sibling subdomain (app.example.com calling api.example.com: `.example.com`).
   * Null: host-only cookies, which in production over https take the `__Host-` prefix (Secure,
   * Path=/, no Domain: a sibling subdomain cannot plant or overwrite them). A Domain rules the
   * prefix out, so with SESSION_DOMAIN set the cookies keep their plain names.
   */
  sessionDomain: string | null;
  /** Minutes after it began that a browser session ends however active it is; 0 = no limit. */
  sessionAbsoluteLifetimeMinutes: number;
  bodyLimit: number;
  requestTimeoutMs: number;
  /** Requests per minute per token (or per IP when anonymous); 0 turns the API limit off. */
  apiRateLimit: number;
  /** Credential checks per minute per email + IP (POST /api/tokens); 0 turns it off. */
  loginRateLimit: number;
  /** Where rate-limit counters live: per process, or shared by every instance (Redis, the database). */
  rateLimitStore: 'memory' | 'redis' | 'database';
  redisUrl: string;
  /**
   * The reverse proxies whose X-Forwarded-For names the client (Fastify's `trustProxy`): none
   * (false), or their addresses and CIDR ranges.
   */
  trustedProxies: false | string[];
  /** Worker processes serving the port (WEB_CONCURRENCY); 1: this process serves alone. */
  webConcurrency: number;
  mail: MailConfig;
  /** Sign-in with OpenID Connect providers (OIDC_PROVIDERS), in the order listed; none by default. */
  oidcProviders: OidcProviderConfig[];
  /** The bearer token GET /metrics asks for (METRICS_TOKEN); null: no /metrics at all (docs/metrics.md). */
  metricsToken: string | null;
  /** The argon2id cost of new password hashes (ARGON_MEMORY in KiB, ARGON_TIME); older hashes are redone at the next sign-in. */
  passwordHashing: { memoryKib: number; iterations: number };
};

export class ConfigError extends Error {}

type Env = Record<string, string | undefined>;

function str(env: Env, name: string, fallback: string): string {
  const value = env[name];
  return value === undefined || value === '' ? fallback : value;
}

function int(env: Env, name: string, fallback: number, min = 0, max = Number.MAX_SAFE_INTEGER): number {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  if (!/^-?\d+$/.test(raw.trim())) throw new ConfigError(`${name} must be a whole number, got "${raw}".`);
  const value = Number(raw);
  if (value < min || value > max) throw new ConfigError(`${name} must be between ${min} and ${max}, got ${value}.`);
  return value;
}

function bool(env: Env, name: string, fallback: boolean): boolean {
  const raw = env[name]?.trim().toLowerCase();
  if (raw === undefined || raw === '') return fallback;
  if (['true', '1', 'yes', 'on'].includes(raw)) return true;
  if (['false', '0', 'no', 'off'].includes(raw)) return false;
  throw new ConfigError(`${name} must be true or false, got "${env[name]}".`);
}

function oneOf<T extends string>(env: Env, name: string, allowed: readonly T[], fallback: T): T {
  const raw = str(env, name, fallback).toLowerCase();
  if (!(allowed as readonly string[]).includes(raw)) {
    throw new ConfigError(`${name} must be one of ${allowed.join(', ')}, got "${raw}".`);
  }
  return raw as T;
}

function list(env: Env, name: string): string[] {
  return str(env, name, '')
    .split(',')
    .map((item) => item.trim())
    .filter((item) => item !== '');
}

function url(env: Env, name: string, fallback: string): string {
  const raw = str(env, name, fallback);
  try {
    const parsed = new URL(raw);
    if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') throw new Error('scheme');
  } catch {
    throw new ConfigError(`${name} must be an http(s) URL, got "${raw}".`);
  }
  return raw.replace(/\/+$/, '');
}

/** Parses Laravel's `base64:<32 bytes>` key form. */
export function parseAppKey(raw: string): Buffer {
  const match = /^base64:([A-Za-z0-9+/=]+)$/.exec(raw.trim());
  const key = match?.[1] === undefined ? null : Buffer.from(match[1], 'base64');
  if (key === null || key.length !== 32) {
    throw new ConfigError('APP_KEY must be "base64:" followed by 32 random bytes in base64 (run `npm run cli -- key:generate`).');
  }
  return key;
}

export function generateAppKey(): string {
  return `base64:${randomBytes(32).toString('base64')}`;
}

// Outside production a missing APP_KEY is generated once and kept under the data directory, so a
// first `npm start` needs no .env and sessions survive restarts. Production must set it explicitly.
function resolveAppKey(env: Env, production: boolean, dataDir: string): Buffer {
  const raw = env.APP_KEY;
  if (raw !== undefined && raw !== '') return parseAppKey(raw);
  if (production) throw new ConfigError('APP_KEY is required in production (run `npm run cli -- key:generate`).');
  const file = resolve(dataDir, 'app.key');
  if (!existsSync(file)) {
    mkdirSync(dirname(file), { recursive: true });
    writeFileSync(file, `${generateAppKey()}\n`, { mode: 0o600 });
  }
  return parseAppKey(readFileSync(file, 'utf8'));
}

function expiration(env: Env): number | null {
  const raw = env.SANCTUM_EXPIRATION?.trim();
  if (raw === undefined || raw === '' || raw.toLowerCase() === 'null') return null;
  const value = Number(raw);
  if (!Number.isFinite(value) || value <= 0) {
    throw new ConfigError(`SANCTUM_EXPIRATION must be a positive number of minutes or null, got "${raw}".`);
  }
  return value;
}

// Names proxy-addr (Fastify's) knows for whole ranges: 127.0.0.1/8 + ::1, 169.254/16 + fe80::/10,
// the private ranges + fc00::/7.
const NAMED_RANGES = ['loopback', 'linklocal', 'uniquelocal'];

/**
 * TRUSTED_PROXIES: empty (default) believes no X-Forwarded-* header, so a client cannot choose
 * the address its limits and audit entries are kept under. Behind a reverse proxy, name it by
 * address or range (`10.0.0.0/8,loopback`): the client is then the nearest address in
 * X-Forwarded-For that is not a trusted proxy, and entries a client writes itself stand further
 * left and are never read. Refused: `*` (any client reaching the service directly would pick its
 * own address) and a number of hops (it cannot tell the proxy from a client that connects
 * directly; Fastify 5 trusts nothing for a number, so it would silently do nothing).
 */
function trustedProxies(env: Env): false | string[] {
  const items = list(env, 'TRUSTED_PROXIES');
  if (items.length === 0) return false;
  for (const item of items) {
    if (item === '*' || /^\d+$/.test(item)) {
      throw new ConfigError(`TRUSTED_PROXIES must name the proxies by address or range (e.g. 10.0.0.0/8,loopback), not "${item}": that would let clients that reach the service directly pick their own address.`);
    }
    if (NAMED_RANGES.includes(item.toLowerCase())) continue;
    const [address = '', prefix, extra] = item.split('/');
    const family = isIP(address);
    const bits = family === 4 ? 32 : 128;
    const prefixOk = prefix === undefined || (/^\d{1,3}$/.test(prefix) && Number(prefix) <= bits);
    if (family === 0 || !prefixOk || extra !== undefined) {
      throw new ConfigError(`TRUSTED_PROXIES must list IP addresses, CIDR ranges (10.0.0.0/8), loopback, linklocal or uniquelocal; got "${item}".`);
    }
  }
  return items.map((item) => (NAMED_RANGES.includes(item.toLowerCase()) ? item.toLowerCase() : item));
}

/**
 * SESSION_ABSOLUTE_LIFETIME (minutes, default 1440 = 24 hours; 0 = none): a browser session ends
 * this long after it began (at login), however active it is (ASVS 7.3.2); "remember me" then signs
 * the user in again with its own, rotated token. It cannot be shorter than the idle lifetime.
 */
function absoluteLifetime(env: Env, idleMinutes: number): number {
  const minutes = int(env, 'SESSION_ABSOLUTE_LIFETIME', 1440, 0);
  if (minutes !== 0 && minutes < idleMinutes) {
    throw new ConfigError(`SESSION_ABSOLUTE_LIFETIME must be 0 (no limit) or at least SESSION_LIFETIME (${idleMinutes}), got ${minutes}.`);
  }
  return minutes;
}

/**
 * WEB_CONCURRENCY: how many worker processes serve the port (default 1; `auto`: one per core the
 * process may use). With several, the memory rate-limit store would count in each worker apart,
 * multiplying every limit and throttle by the number of workers without a word: refused, so that
 * the operator chooses a shared store (or one worker).
 */
function webConcurrency(env: Env, rateLimitStore: Config['rateLimitStore']): number {
  const raw = str(env, 'WEB_CONCURRENCY', '1').trim();
  const workers = raw.toLowerCase() === 'auto' ? availableParallelism() : /^\d+$/.test(raw) ? Number(raw) : 0;
  if (workers < 1 || !Number.isSafeInteger(workers)) {
    throw new ConfigError(`WEB_CONCURRENCY must be a whole number of worker processes (1 or more) or "auto", got "${raw}".`);
  }
  if (workers > 1 && rateLimitStore === 'memory') {
    const value = raw.toLowerCase() === 'auto' ? `auto (${workers} here)` : String(workers);
    throw new ConfigError(
      `WEB_CONCURRENCY=${value} runs ${workers} worker processes, and RATE_LIMIT_STORE=memory would count the rate limits and login throttles in each worker apart: set RATE_LIMIT_STORE=redis or database to share them, or WEB_CONCURRENCY=1.`,
    );
  }
  return workers;
}

/**
 * METRICS_TOKEN: unset, no /metrics route at all; set, the token a scraper sends as a bearer
 * token. At least 32 characters, as a secret that anyone reaching the port may guess at (the
 * route is outside the API's rate limits); the message never repeats the value.
 */
function metricsToken(env: Env): string | null {
  const raw = str(env, 'METRICS_TOKEN', '');
  if (raw === '') return null;
  if (raw.length < 32 || !/^[\x21-\x7e]+$/.test(raw)) {
    throw new ConfigError(`METRICS_TOKEN must be at least 32 printable characters without spaces (e.g. \`openssl rand -hex 32\`); the one set has ${raw.length}.`);
  }
  return raw;
}

const LOOPBACK_HOSTS = new Set(['localhost', '127.0.0.1', '[::1]']);

/**
 * The host of the default APP_URL: `localhost` when HOST is a loopback or unspecified address
 * (this machine's browser then reaches the service as localhost), else HOST itself. Not
 * 127.0.0.1: browsers refuse passkeys on an IP address (no valid relying-party id), while
 * http://localhost is a secure context where they work; providers accept its redirect URIs too.
 */
function defaultAppHost(host: string): string {
  if (host === 'localhost' || host === '0.0.0.0' || host === '::' || host === '::1' || /^127\./.test(host)) return 'localhost';
  return isIP(host) === 6 ? `[${host}]` : host;
}

/** The prefix of a provider's variables: OIDC_, the name upper-cased with `-` as `_`, then `_`. */
export function oidcVariablePrefix(name: string): string {
  return `OIDC_${name.toUpperCase().replaceAll('-', '_')}_`;
}

/**
 * OIDC_PROVIDERS=google,corp and, for each name, OIDC_<NAME>_ISSUER, _CLIENT_ID, _CLIENT_SECRET
 * (required), _LABEL and _SCOPES (optional). The issuer is https, or http on this machine
 * (localhost, 127.0.0.1, [::1]) outside production: a code and client secret sent in clear to
 * another host could be read on the way, and an ID token fetched in clear could be forged there.
 * https uses Node's own trust (NODE_EXTRA_CA_CERTS adds a private CA).
 */
function oidcProviders(env: Env, production: boolean): OidcProviderConfig[] {
  const names = list(env, 'OIDC_PROVIDERS');
  const prefixes = new Map<string, string>();
  for (const name of names) {
    if (!/^[a-z0-9_-]{1,64}$/.test(name)) {
      throw new ConfigError(`OIDC_PROVIDERS must list names of lower-case letters, digits, "_" and "-" (at most 64), got "${name}".`);
    }
    const prefix = oidcVariablePrefix(name);
    const earlier = prefixes.get(prefix);
    if (earlier !== undefined) {
      throw new ConfigError(`OIDC_PROVIDERS lists "${name}" ${earlier === name ? 'twice' : `and "${earlier}", whose variables would both be ${prefix}*`}.`);
    }
    prefixes.set(prefix, name);
  }
  return names.map((name) => {
    const prefix = oidcVariablePrefix(name);
    const required = (key: string): string => {
      const value = str(env, `${prefix}${key}`, '').trim();
      if (value === '') throw new ConfigError(`${prefix}${key} is required: OIDC_PROVIDERS lists "${name}".`);
      return value;
    };
    const issuer = required('ISSUER');
    let parsed: URL;
    try {
      parsed = new URL(issuer);
    } catch {
      throw new ConfigError(`${prefix}ISSUER must be the provider's issuer URL (https://…), got "${issuer}".`);
    }
    const loopback = parsed.protocol === 'http:' && LOOPBACK_HOSTS.has(parsed.hostname);
    if (parsed.protocol !== 'https:' && !(loopback && !production)) {
      throw new ConfigError(
        `${prefix}ISSUER must be an https URL${production ? '' : ' (http only on localhost, 127.0.0.1 or [::1], outside production)'}, got "${issuer}".`,
      );
    }
    if (parsed.search !== '' || parsed.hash !== '' || parsed.username !== '' || parsed.password !== '') {
      throw new ConfigError(`${prefix}ISSUER must be the issuer URL alone, without query, fragment or credentials, got "${issuer}".`);
    }
    const scopes = str(env, `${prefix}SCOPES`, 'openid email profile').split(/[\s,]+/).filter((scope) => scope !== '');
    if (!scopes.includes('openid')) throw new ConfigError(`${prefix}SCOPES must include openid, got "${scopes.join(' ')}".`);
    return {
      name,
      issuer,
      clientId: required('CLIENT_ID'),
      clientSecret: required('CLIENT_SECRET'),
      label: str(env, `${prefix}LABEL`, name).trim() || name,
      scopes,
    };
  });
}

/** Builds the configuration from an environment (process.env by default, after loading .env). */
/**
 * ARGON_MEMORY (KiB) and ARGON_TIME, Laravel's names: OWASP's minimum for argon2id (19 MiB, 2
 * passes) by default, more if asked. Less only with NODE_ENV=test, where the suite's apps hash
 * cheaply as Laravel's phpunit.xml lowers BCRYPT_ROUNDS to 4: a weaker hash is never a setting
 * a server can be started with.
 */
function passwordHashing(env: Env, nodeEnv: Config['env']): Config['passwordHashing'] {
  const test = nodeEnv === 'test';
  return {
    memoryKib: int(env, 'ARGON_MEMORY', 19_456, test ? 8 : 19_456, 4 * 1024 * 1024),
    iterations: int(env, 'ARGON_TIME', 2, test ? 1 : 2, 100),
  };
}

export function loadConfig(env: Env = process.env): Config {
  const nodeEnv = oneOf(env, 'NODE_ENV', ['production', 'development', 'test'] as const, 'development');
  const production = nodeEnv === 'production';
  const dataDir = resolve(str(env, 'DATA_DIR', './data'));
  const host = str(env, 'HOST', '127.0.0.1');
  const port = int(env, 'PORT', 3000, 0, 65535);
  const databaseUrl = str(env, 'DATABASE_URL', 'sqlite:./data/app.db');
  if (!/^(sqlite:|postgres(ql)?:\/\/)/.test(databaseUrl)) {
    throw new ConfigError(`DATABASE_URL must start with sqlite: or postgres://, got "${databaseUrl.replace(/:[^:@/]*@/, ':***@')}".`);
  }
  const tokenPrefix = str(env, 'SANCTUM_TOKEN_PREFIX', '');
  if (!/^[A-Za-z0-9_-]*$/.test(tokenPrefix)) {
    throw new ConfigError('SANCTUM_TOKEN_PREFIX may only contain letters, digits, "_" and "-".');
  }
  const fromAddress = str(env, 'MAIL_FROM_ADDRESS', 'hello@example.com');
  const sessionLifetimeMinutes = int(env, 'SESSION_LIFETIME', 120, 1);
  const rateLimitStore = oneOf(env, 'RATE_LIMIT_STORE', ['memory', 'redis', 'database'] as const, 'memory');
  const config: Config = {
    env: nodeEnv,
    appName: str(env, 'APP_NAME', 'Tessera'),
    appUrl: url(env, 'APP_URL', `http://${defaultAppHost(host)}:${port}`),
    appKey: resolveAppKey(env, production, dataDir),
    locale: oneOf(env, 'APP_LOCALE', ['en', 'fr'] as const, 'en'),
    host,
    port,
    databaseUrl,
    dataDir,
    logLevel: oneOf(env, 'LOG_LEVEL', ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const, 'info'),
    tokenExpirationMinutes: expiration(env),
    tokenPrefix,
    statefulDomains: list(env, 'SANCTUM_STATEFUL_DOMAINS').map((h) => h.toLowerCase()),
    corsAllowedOrigins: list(env, 'CORS_ALLOWED_ORIGINS'),
    mustVerifyEmail: bool(env, 'MUST_VERIFY_EMAIL', false),
    // Laravel's auth.password_timeout: three hours.
    passwordTimeoutSeconds: int(env, 'PASSWORD_TIMEOUT', 10_800, 1),
    adminRequireTwoFactor: bool(env, 'ADMIN_REQUIRE_2FA', false),
    newDeviceAlerts: bool(env, 'NEW_DEVICE_ALERTS', true),
    sessionLifetimeMinutes,
    sessionDomain: str(env, 'SESSION_DOMAIN', '').trim() || null,
    sessionAbsoluteLifetimeMinutes: absoluteLifetime(env, sessionLifetimeMinutes),
    bodyLimit: int(env, 'BODY_LIMIT', 1024 * 1024, 1024),
    requestTimeoutMs: int(env, 'REQUEST_TIMEOUT', 30_000, 0),
    apiRateLimit: int(env, 'API_RATE_LIMIT', 60, 0),
    loginRateLimit: int(env, 'LOGIN_RATE_LIMIT', 5, 0),
    rateLimitStore,
    redisUrl: str(env, 'REDIS_URL', 'redis://127.0.0.1:6379'),
    trustedProxies: trustedProxies(env),
    webConcurrency: webConcurrency(env, rateLimitStore),
    mail: {
      mailer: oneOf(env, 'MAIL_MAILER', ['smtp', 'log'] as const, 'log'),
      host: str(env, 'MAIL_HOST', '127.0.0.1'),
      port: int(env, 'MAIL_PORT', 587, 1, 65535),
      username: env.MAIL_USERNAME || null,
      password: env.MAIL_PASSWORD || null,
      encryption: oneOf(env, 'MAIL_ENCRYPTION', ['tls', 'starttls', 'none'] as const, 'none'),
      fromAddress,
      fromName: str(env, 'MAIL_FROM_NAME', str(env, 'APP_NAME', 'Tessera')),
      logKeep: int(env, 'MAIL_LOG_KEEP', 200, 1),
    },
    oidcProviders: oidcProviders(env, production),
    metricsToken: metricsToken(env),
    passwordHashing: passwordHashing(env, nodeEnv),
  };
  return Object.freeze(config);
}

/** process.env after loading ./.env when there is one (variables already set win). */
export function readEnv(): Env {
  if (existsSync('.env')) process.loadEnvFile('.env');
  return process.env;
}
