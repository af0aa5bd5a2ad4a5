// What the server process says when it cannot start: one line that names the cause and the
// setting to change (`PORT 3000 is already in use: stop the other process or set PORT.`), exit
// code 1, and the stack only at LOG_LEVEL=debug or trace: an operator reads the line, a developer
// asks for the rest. Also the checks that make those causes show before the service listens: the
// database opens and answers, the migrations apply, Redis answers when RATE_LIMIT_STORE=redis.
// No line ever shows a password: URLs are reduced to host:port, and anything else printed is
// masked.
import { inspect } from 'node:util';
import { Redis } from 'ioredis';
import { sql } from 'kysely';
import { pino } from 'pino';
import { ConfigError, loadConfig, readEnv, type Config } from './config.js';
import { connect, sqliteUrlPath, type Db } from './db/connect.js';
import { isFullDisk } from './db/disk-space.js';
import { migrateToLatest, migrations } from './db/migrator.js';
import { APP_KEY_MISMATCH, storedSecretsOpen } from './modules/two-factor/sealed-secrets.js';

/** A failure at start, already put in its one line; `cause` is the original error. */
export class StartupError extends Error {
  constructor(line: string, cause: unknown) {
    super(line, { cause });
    this.name = 'StartupError';
  }
}

/** How long the start waits for Redis before saying it cannot be reached. */
const REDIS_WAIT_MS = 3000;

const REASONS: Record<string, string> = {
  ECONNREFUSED: 'connection refused',
  ECONNRESET: 'connection reset',
  ETIMEDOUT: 'no answer',
  EHOSTUNREACH: 'host unreachable',
  ENETUNREACH: 'network unreachable',
  ENOTFOUND: 'host not found',
  EAI_AGAIN: 'host name lookup failed',
  EACCES: 'permission denied',
  EPERM: 'operation not permitted',
  EROFS: 'read-only file system',
  ENOSPC: 'no space left on device',
  ENOENT: 'no such file or directory',
};

type ErrorShape = { code?: unknown; message?: unknown; syscall?: unknown; path?: unknown; port?: unknown; address?: unknown; hostname?: unknown; errors?: unknown };

function shape(error: unknown): ErrorShape {
  return typeof error === 'object' && error !== null ? (error as ErrorShape) : {};
}

/** The error's code, or that of the first of an AggregateError (every address of a host refused). */
function codeOf(error: unknown): string | undefined {
  const e = shape(error);
  if (typeof e.code === 'string') return e.code;
  return Array.isArray(e.errors) && e.errors.length > 0 ? codeOf(e.errors[0]) : undefined;
}

/** The first line of the message, without its final period (the lines add their own). */
function firstLine(error: unknown): string {
  const message = shape(error).message;
  const text = typeof message === 'string' && message.trim() !== '' ? message : String(error);
  return (text.split('\n')[0] ?? '').trim().replace(/\.$/, '');
}

function reasonOf(error: unknown): string {
  return REASONS[codeOf(error) ?? ''] ?? firstLine(error);
}

/** host:port of a URL, never its user or password (a Unix socket is named by its path). */
function whereOf(url: string, defaultPort: number): string {
  try {
    const parsed = new URL(url);
    const socket = parsed.searchParams.get('host');
    if (parsed.hostname === '' && socket !== null) return socket;
    return `${parsed.hostname || 'localhost'}:${parsed.port || defaultPort}`;
  } catch {
    return 'the configured address';
  }
}

// PostgreSQL's codes for a connection it refuses (database, role, password, server state).
const PG_CONNECTION_CODES = new Set(['3D000', '28000', '28P01', '57P03', '53300', '08001', '08004', '08006']);
const PG_CONNECTION_MESSAGES = /Connection terminated|timeout exceeded when trying to connect|connection timeout|does not support SSL/i;
const SQLITE_OPEN_CODES = new Set(['SQLITE_CANTOPEN', 'SQLITE_NOTADB', 'SQLITE_READONLY', 'SQLITE_PERM', 'SQLITE_CORRUPT', 'SQLITE_FULL']);

/**
 * The one line for a database that cannot be opened or reached (`DATABASE_URL: cannot connect to
 * 127.0.0.1:5432 (connection refused).`), or null when `error` is about something else. Used by
 * the start and by the CLI.
 */
export function databaseFailureLine(error: unknown, databaseUrl: string): string | null {
  const e = shape(error);
  const code = codeOf(error);
  if (databaseUrl.startsWith('sqlite:')) {
    const path = sqliteUrlPath(databaseUrl);
    if (e.syscall === 'mkdir' && typeof e.path === 'string') {
      const why = code === 'EEXIST' || code === 'ENOTDIR' ? `${e.path} is not a directory` : `${e.path}: ${reasonOf(error)}`;
      return `DATABASE_URL: cannot create the SQLite database ${path} (${why}).`;
    }
    if (isFullDisk(error, path)) return fullDiskLine(path);
    if (code !== undefined && (SQLITE_OPEN_CODES.has(code) || code.startsWith('SQLITE_IOERR'))) {
      return `DATABASE_URL: cannot open the SQLite database ${path} (${firstLine(error)}).`;
    }
    return null;
  }
  const where = whereOf(databaseUrl, 5432);
  if (code === '3D000') {
    const name = /database "(.*)" does not exist/.exec(firstLine(error))?.[1] ?? '';
    return `DATABASE_URL: the database "${name}" does not exist on ${where}: create it or set DATABASE_URL.`;
  }
  if (code === '28P01' || code === '28000') return `DATABASE_URL: ${where} refused the login (${firstLine(error)}).`;
  if (code !== undefined && (code in REASONS || PG_CONNECTION_CODES.has(code))) {
    return `DATABASE_URL: cannot connect to ${where} (${reasonOf(error)}).`;
  }
  const message = firstLine(error);
  if (PG_CONNECTION_MESSAGES.test(message)) {
    const why = /timeout/i.test(message) ? 'no answer within 3 s' : /terminated/i.test(message) ? 'the connection was closed before PostgreSQL answered' : message;
    return `DATABASE_URL: cannot connect to ${where} (${why}).`;
  }
  return null;
}

/** The line for a SQLite database on a full disk: what SQLite says there ("disk I/O error") names no cause. */
function fullDiskLine(path: string): string {
  return `DATABASE_URL: the disk holding the SQLite database ${path} is full (no space left on device): free some space, then start again.`;
}

/** Opens the database and asks it one question, so that any failure to reach it is said as such. */
async function openDatabase(config: Config): Promise<Db> {
  const fail = (error: unknown) =>
    new StartupError(databaseFailureLine(error, config.databaseUrl) ?? `DATABASE_URL: cannot open the database (${firstLine(error)}).`, error);
  let db: Db;
  try {
    // Migrations run on this connection: no request timeouts (a long CREATE INDEX is legitimate).
    db = connect(config.databaseUrl, { requestTimeouts: false });
  } catch (error) {
    throw fail(error);
  }
  try {
    await sql`select 1`.execute(db.kysely);
    return db;
  } catch (error) {
    await db.close().catch(() => undefined);
    throw fail(error);
  }
}

/** The first migration of the list that the database has not recorded: the one that failed. */
async function firstPending(db: Db): Promise<string | null> {
  try {
    const rows = await sql<{ name: string }>`select name from kysely_migration`.execute(db.kysely);
    const done = new Set(rows.rows.map((row) => row.name));
    return Object.keys(migrations).find((name) => !done.has(name)) ?? null;
  } catch {
    return null;
  }
}

async function migrate(db: Db, config: Config): Promise<void> {
  try {
    await migrateToLatest(db);
  } catch (error) {
    if (db.dialect === 'sqlite' && config.databaseUrl.startsWith('sqlite:') && isFullDisk(error, sqliteUrlPath(config.databaseUrl))) {
      throw new StartupError(fullDiskLine(sqliteUrlPath(config.databaseUrl)), error);
    }
    const name = await firstPending(db);
    throw new StartupError(`DATABASE_URL: migration ${name ?? '(unknown)'} failed: ${firstLine(error)}.`, error);
  }
}

/** Connects to Redis once and pings it, giving up after REDIS_WAIT_MS. */
async function checkRedis(url: string): Promise<void> {
  // No retries and no queue: this connection only asks whether Redis answers, then goes.
  const redis = new Redis(url, {
    lazyConnect: true,
    connectTimeout: REDIS_WAIT_MS,
    commandTimeout: REDIS_WAIT_MS,
    maxRetriesPerRequest: 0,
    enableOfflineQueue: false,
    retryStrategy: () => null,
  });
  // The connection's own error (ECONNREFUSED…) says more than the "Connection is closed." that
  // connect() rejects with.
  let cause: unknown;
  redis.on('error', (error: unknown) => (cause ??= error));
  const timer = setTimeout(() => {
    cause ??= new Error(`no answer within ${REDIS_WAIT_MS / 1000} s`);
    redis.disconnect();
  }, REDIS_WAIT_MS);
  try {
    await redis.connect();
    await redis.ping();
  } catch (error) {
    cause ??= error;
    throw new StartupError(`REDIS_URL: cannot connect to ${whereOf(url, 6379)} (${reasonOf(cause)}), and RATE_LIMIT_STORE=redis needs it.`, cause);
  } finally {
    clearTimeout(timer);
    redis.disconnect();
  }
}

/** Settings that start but cannot work as the operator surely meant; one log line each. */
export function startupWarnings(config: Config): string[] {
  const warnings: string[] = [];
  // The session cookie is Secure when APP_URL is https, and @fastify/session sets a Secure cookie
  // only on a request it sees as https: behind a TLS-terminating proxy that is only when the
  // proxy is trusted (its X-Forwarded-Proto believed). Otherwise no login and no form can work.
  if (config.appUrl.startsWith('https:') && config.trustedProxies === false) {
    warnings.push(
      'APP_URL is https but TRUSTED_PROXIES is empty: requests that reach the service over http (from a TLS-terminating proxy) get no session cookie, so logins fail and every form answers 419. Set TRUSTED_PROXIES to the proxy\'s address.',
    );
  }
  // The log mailer sends nothing: in production no reset or verification mail reaches anyone,
  // and the links that would have are written to disk instead.
  if (config.env === 'production' && config.mail.mailer === 'log') {
    warnings.push(
      `MAIL_MAILER is log in production: no mail is sent, and every reset and verification link is written to ${config.dataDir}/mail instead (the newest ${config.mail.logKeep} kept). Set MAIL_MAILER=smtp and MAIL_HOST.`,
    );
  }
  return warnings;
}

/**
 * What the process checks once before it serves (the primary, when there are several workers):
 * the database opens and answers, the migrations apply, Redis answers when it holds the rate
 * limits. A failure is a StartupError with its one line. Then the warnings, as log lines.
 */
export async function prepareStart(config: Config): Promise<void> {
  const db = await openDatabase(config);
  let keyOpensSecrets: boolean;
  try {
    await migrate(db, config);
    keyOpensSecrets = await storedSecretsOpen(db, config.appKey);
  } finally {
    await db.close();
  }
  // A database restored without its APP_KEY: production refuses to serve accounts it would lock
  // out without a word; development (a copied DATA_DIR, a new app.key) is told, and starts.
  if (!keyOpensSecrets && config.env === 'production') throw new StartupError(APP_KEY_MISMATCH, null);
  if (config.rateLimitStore === 'redis') await checkRedis(config.redisUrl);
  const warnings = [...startupWarnings(config), ...(keyOpensSecrets ? [] : [APP_KEY_MISMATCH])];
  if (warnings.length > 0) {
    const log = pino({ level: config.logLevel }, pino.destination({ dest: 1, sync: true }));
    for (const warning of warnings) log.warn(warning);
  }
}

/** The passwords of the configuration, as written and as URL-decoded. */
function secretsOf(config: Config | null): string[] {
  if (config === null) return [];
  const secrets = new Set<string>();
  for (const url of [config.databaseUrl, config.redisUrl]) {
    try {
      const password = new URL(url).password;
      if (password !== '') secrets.add(password).add(decodeURIComponent(password));
    } catch {
      // not a URL (sqlite:…), or a password that is not valid percent-encoding: kept as written
    }
  }
  if (config.mail.password !== null) secrets.add(config.mail.password);
  for (const provider of config.oidcProviders) secrets.add(provider.clientSecret);
  return [...secrets];
}

/**
 * The line for a failure at start, and whether it was foreseen (its line is the whole story).
 * Null config: it could not be read.
 */
function describe(error: unknown, config: Config | null): { line: string; foreseen: boolean } {
  const foreseen = (line: string) => ({ line, foreseen: true });
  if (error instanceof ConfigError) return foreseen(`Configuration error: ${error.message}`);
  if (error instanceof StartupError) return foreseen(error.message);
  const e = shape(error);
  if (e.syscall === 'listen') {
    const port = typeof e.port === 'number' ? e.port : config?.port;
    if (e.code === 'EADDRINUSE') return foreseen(`PORT ${port} is already in use: stop the other process or set PORT.`);
    if (e.code === 'EACCES') return foreseen(`PORT ${port} needs privileges this process does not have: set PORT above 1023.`);
    if (e.code === 'EADDRNOTAVAIL') return foreseen(`HOST ${String(e.address ?? config?.host)} is not an address of this machine: set HOST.`);
  }
  if (e.syscall === 'getaddrinfo' && config !== null && e.hostname === config.host) {
    return foreseen(`HOST ${config.host} cannot be resolved (${reasonOf(error)}): set HOST.`);
  }
  return { line: `The service could not start: ${firstLine(error)}.`, foreseen: false };
}

/**
 * What the process prints for a failure at start: the line, then the error itself at
 * LOG_LEVEL=debug or trace, or when nobody foresaw the failure (a bug: its report needs the
 * stack). Every password of the configuration is masked.
 */
export function startupReport(error: unknown, config: Config | null): string {
  const { line, foreseen } = describe(error, config);
  const debug = config !== null && (config.logLevel === 'debug' || config.logLevel === 'trace');
  let text = line;
  if (debug || !foreseen) text += `\n${inspect(error instanceof StartupError ? error.cause : error, { depth: 4 })}`;
  for (const secret of secretsOf(config)) text = text.split(secret).join('***');
  return text;
}

/** Prints the report on stderr and exits 1. */
function exitAtStart(error: unknown, config: Config | null): never {
  process.stderr.write(`${startupReport(error, config)}\n`);
  process.exit(1);
}

/** Loads the configuration and runs `main` with it; any failure before it resolves ends the process with its line. */
export async function start(main: (config: Config) => Promise<void>): Promise<void> {
  let config: Config | null = null;
  try {
    config = loadConfig(readEnv());
    await main(config);
  } catch (error) {
    exitAtStart(error, config);
  }
}
