// Support for the security and fuzz suites: the app's routes as registered (so a route added
// later is covered without editing a test), a dump of every table of the test database to
// prove that a refused request changed nothing, and the exact bodies the API promises.
import diagnostics from 'node:diagnostics_channel';
import type { FastifyInstance, RouteOptions } from 'fastify';
import { sql } from 'kysely';
import type { Db } from '../../src/db/connect.js';
import type { RouteAuth } from '../../src/plugins/types.js';
import { buildTestApp, type TestApp } from '../helpers.js';

export const UNAUTHENTICATED = '{"message":"Unauthenticated.","errors":{}}';
export const UNAUTHORIZED = '{"message":"This action is unauthorized.","errors":{}}';

/** A route as registered: its method, path, guard, and the JSON types of its body's fields. */
export type RouteInfo = { method: string; url: string; auth: RouteAuth | undefined; bodyFields: Record<string, string[]> };

type JsonSchema = { type?: string | string[]; anyOf?: JsonSchema[]; properties?: Record<string, JsonSchema> };
const typesOf = (schema: JsonSchema): string[] =>
  schema.anyOf !== undefined ? schema.anyOf.flatMap(typesOf) : schema.type === undefined ? [] : [schema.type].flat();

/**
 * A test app (fresh database) and every route it registered, collected by an onRoute hook added
 * the moment Fastify creates the instance (Fastify announces each new instance on the
 * `fastify.initialization` diagnostics channel), so no route registered later is missed.
 */
export async function buildAppWithRoutes(env: Record<string, string> = {}): Promise<{ t: TestApp; routes: RouteInfo[] }> {
  const routes: RouteInfo[] = [];
  const channel = diagnostics.channel('fastify.initialization');
  const onInit = (message: unknown) => {
    const app = (message as { fastify: FastifyInstance }).fastify;
    app.addHook('onRoute', (route: RouteOptions) => {
      const methods = Array.isArray(route.method) ? route.method : [route.method];
      for (const method of methods) {
        if (method === 'HEAD' || method === 'OPTIONS') continue;
        const properties = (route.schema?.body as JsonSchema | undefined)?.properties ?? {};
        const bodyFields = Object.fromEntries(Object.entries(properties).map(([name, schema]) => [name, typesOf(schema)]));
        routes.push({ method, url: route.url, auth: route.config?.auth as RouteAuth | undefined, bodyFields });
      }
    });
  };
  channel.subscribe(onInit);
  try {
    const t = await buildTestApp(env);
    const seen = new Set<string>();
    const unique = routes.filter((route) => {
      const key = `${route.method} ${route.url}`;
      if (seen.has(key)) return false;
      seen.add(key);
      return true;
    });
    return { t, routes: unique };
  } finally {
    channel.unsubscribe(onInit);
  }
}

export const isApiRoute = (route: RouteInfo): boolean => route.url === '/api' || route.url.startsWith('/api/');
export const isUnsafe = (method: string): boolean => ['POST', 'PUT', 'PATCH', 'DELETE'].includes(method);
export const needsToken = (route: RouteInfo): boolean =>
  isApiRoute(route) && route.auth !== 'public' && route.auth !== 'optional-token' && route.auth !== undefined;

/** Puts a value in each `:param` of a route path (and drops a trailing wildcard). */
export function fillPath(url: string, value: (name: string) => string): string {
  return url.replace(/:([A-Za-z0-9_]+)/g, (_m, name: string) => percentEncode(value(name))).replace(/\*$/, '');
}

/** Percent-encodes any string, lone surrogates included (encodeURIComponent throws on those). */
export function percentEncode(value: string): string {
  try {
    return encodeURIComponent(value);
  } catch {
    return [...Buffer.from(value, 'utf8')].map((byte) => `%${byte.toString(16).padStart(2, '0')}`).join('');
  }
}

export type Snapshot = Record<string, string[]>;

/**
 * Bookkeeping a refused request may legitimately write, left out of the comparison:
 * - the visitor's own session row (flash messages and old input after a failed form, the
 *   rolling expiry) — the session of the caller, not data of the service — and session_version,
 *   the counter every change of a session row moves (PostgreSQL keeps sessions by it);
 * - rate-limit and throttle counters (counting refused attempts is their purpose);
 * - a token's last_used_at (written at most once a minute when a valid token is used, whatever
 *   the answer; the suites use each token once before taking a snapshot anyway), and
 *   token_version, the counter that write moves (PostgreSQL keeps the tokens page's list by it).
 */
export const IGNORED_TABLES = /^(sessions|session_version|token_version|rate_limits?|throttles?|login_attempts|cache.*|kysely_migration.*)$/;
const IGNORED_COLUMNS: Record<string, string[]> = { personal_access_tokens: ['last_used_at'] };

async function tableNames(db: Db): Promise<string[]> {
  if (db.dialect === 'sqlite') {
    const rows = await sql<{ name: string }>`select name from sqlite_master where type = 'table' and name not like 'sqlite_%'`.execute(db.kysely);
    return rows.rows.map((row) => row.name).sort();
  }
  const rows = await sql<{ name: string }>`select table_name as name from information_schema.tables where table_schema = current_schema() and table_type = 'BASE TABLE'`.execute(
    db.kysely,
  );
  return rows.rows.map((row) => row.name).sort();
}

/** Every row of every table (except IGNORED_TABLES), as sorted JSON lines per table. */
export async function snapshotDatabase(db: Db): Promise<Snapshot> {
  const snapshot: Snapshot = {};
  for (const table of await tableNames(db)) {
    if (IGNORED_TABLES.test(table)) continue;
    const rows = await sql<Record<string, unknown>>`select * from ${sql.table(table)}`.execute(db.kysely);
    const ignored = IGNORED_COLUMNS[table] ?? [];
    snapshot[table] = rows.rows
      .map((row) => JSON.stringify(Object.fromEntries(Object.entries(row).filter(([column]) => !ignored.includes(column)))))
      .sort();
  }
  return snapshot;
}

/** The differences between two snapshots, as readable lines (empty when equal). */
export function diffSnapshots(before: Snapshot, after: Snapshot): string[] {
  const lines: string[] = [];
  for (const table of new Set([...Object.keys(before), ...Object.keys(after)])) {
    const was = new Set(before[table] ?? []);
    const now = new Set(after[table] ?? []);
    for (const row of was) if (!now.has(row)) lines.push(`${table}: - ${row.slice(0, 300)}`);
    for (const row of now) if (!was.has(row)) lines.push(`${table}: + ${row.slice(0, 300)}`);
  }
  return lines;
}

/** True when the body is the API error envelope {message: string, errors: {field: string[]}}. */
export function isErrorEnvelope(body: string): boolean {
  let parsed: unknown;
  try {
    parsed = JSON.parse(body);
  } catch {
    return false;
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) return false;
  const { message, errors } = parsed as { message?: unknown; errors?: unknown };
  if (typeof message !== 'string' || message === '') return false;
  if (typeof errors !== 'object' || errors === null || Array.isArray(errors)) return false;
  return Object.values(errors).every((list) => Array.isArray(list) && list.length > 0 && list.every((item) => typeof item === 'string'));
}

/** One FIGURES line, the form SECURITY.md copies from. */
export function figures(suite: string, parts: Record<string, number | string>): void {
  console.log(`FIGURES ${suite}: ${Object.entries(parts).map(([key, value]) => (key === 'inputs' ? `${value} inputs` : `${value} ${key}`)).join(', ')}`);
}
