// Moving a Laravel + Sanctum app's accounts over: its users and their personal access tokens,
// read from the Laravel database (a SQLite file or PostgreSQL), written into ours with their ids,
// so `<id>|<secret>` tokens keep working and bcrypt passwords sign in (and are rehashed to
// argon2id at the next login).
//
// Decisions (the issue asks that a Laravel users table can be imported and that its tokens stay
// valid; the rest is ours):
// - Only into a database with no users and no tokens yet: ids are kept, so a merge could collide,
//   and an import is a one-time move. All or nothing, in one transaction.
// - Laravel writes timestamps as "YYYY-MM-DD HH:MM:SS" in the app's timezone (UTC by default,
//   which is assumed); they become the ISO-8601 UTC strings the service stores and compares.
// - remember_token is not carried over: Laravel's remember-me cookies are encrypted in Laravel's
//   own format, which the service does not read; those users sign in again once.
// - Tokens of other models (tokenable_type other than the user model) and of users that no longer
//   exist are skipped and counted; a token whose hash or abilities are malformed stops the import.
// - Columns Laravel apps drop or Laravel versions lack are optional (an app without email
//   verification has no users.email_verified_at; Sanctum 2 has no expires_at). A missing one
//   imports as empty and the result names it: nobody verified, no remember token, no abilities,
//   never used, no expiry date of its own (SANCTUM_EXPIRATION still applies). A missing created_at
//   becomes the time of the import (the true date is unknown; the import is when the row appeared
//   here) and a missing updated_at the creation date, as a null one does. id, name, email and
//   password (and a token's id, owner, name and digest) are required.
import SQLite from 'better-sqlite3';
import { sql, type Insertable } from 'kysely';
import pg from 'pg';
import { writeTransaction, type Db } from '../../db/connect.js';
import type { PersonalAccessTokensTable } from '../../db/types.js';
import { digestBytes } from '../tokens/token-string.js';

export class ImportError extends Error {}

/** The rows read, and the optional columns each table lacked (as `table.column`). */
export type LaravelRows = { users: Record<string, unknown>[]; tokens: Record<string, unknown>[]; missing?: string[] };
export type ImportResult = { users: number; tokens: number; skippedTokens: number; missing: string[] };

type TableColumns = { table: 'users' | 'personal_access_tokens'; required: readonly string[]; optional: readonly string[] };
// remember_token is looked for (to say it was missing) but never read: it is not carried over.
const USERS: TableColumns = { table: 'users', required: ['id', 'name', 'email', 'password'], optional: ['email_verified_at', 'remember_token', 'created_at', 'updated_at'] };
const TOKENS: TableColumns = {
  table: 'personal_access_tokens',
  required: ['id', 'tokenable_type', 'tokenable_id', 'name', 'token'],
  optional: ['abilities', 'last_used_at', 'expires_at', 'created_at', 'updated_at'],
};
const NOT_READ = new Set(['remember_token']);

/**
 * The select of one table's columns, given the names the table has: a missing required column is
 * an error naming it, a missing optional one is added to `missing` and left out.
 */
function selectFor(spec: TableColumns, present: string[], missing: string[]): string {
  const has = new Set(present.map((name) => name.toLowerCase()));
  const absent = spec.required.filter((column) => !has.has(column));
  if (absent.length > 0) {
    throw new ImportError(`The Laravel ${spec.table} table has no ${absent.join(', ')} column${absent.length === 1 ? '' : 's'}, which the import needs (${spec.required.join(', ')}).`);
  }
  const optional = spec.optional.filter((column) => has.has(column));
  missing.push(...spec.optional.filter((column) => !has.has(column)).map((column) => `${spec.table}.${column}`));
  return `select ${[...spec.required, ...optional.filter((column) => !NOT_READ.has(column))].map((column) => `"${column}"`).join(', ')} from ${spec.table} order by id`;
}

/** Reads the users and personal_access_tokens tables of a Laravel database (`sqlite:PATH` or `postgres://…`). */
export async function readLaravelDatabase(url: string): Promise<LaravelRows> {
  if (url.startsWith('sqlite:')) {
    const path = url.replace(/^sqlite:(\/\/)?/, '');
    let sqlite: SQLite.Database;
    try {
      // Read-only: the Laravel database is not changed, not even its journal mode.
      sqlite = new SQLite(path, { readonly: true, fileMustExist: true });
    } catch (error) {
      throw new ImportError(`Cannot open the Laravel database ${path}: ${(error as Error).message}`);
    }
    try {
      const missing: string[] = [];
      const read = async (spec: TableColumns) => {
        const columns = await readColumns(spec.table, () => sqlite.prepare(`select * from ${spec.table}`).columns().map((column) => column.name));
        const query = selectFor(spec, columns, missing);
        return readTable(spec.table, () => sqlite.prepare(query).all() as Record<string, unknown>[]);
      };
      return { users: await read(USERS), tokens: await read(TOKENS), missing };
    } finally {
      sqlite.close();
    }
  }
  if (/^postgres(ql)?:\/\//.test(url)) {
    // Timestamps as PostgreSQL writes them (text), normalized below like SQLite's.
    const asText = (value: string) => value;
    const client = new pg.Client({
      connectionString: url,
      types: { getTypeParser: (oid: number, format?: 'text' | 'binary') => (oid === 1114 || oid === 1184 || oid === 1082 ? asText : pg.types.getTypeParser(oid, format)) },
    });
    try {
      await client.connect();
    } catch (error) {
      throw new ImportError(`Cannot connect to the Laravel database: ${(error as Error).message}`);
    }
    try {
      const missing: string[] = [];
      const read = async (spec: TableColumns) => {
        const columns = await readColumns(spec.table, async () => (await client.query(`select * from ${spec.table} where false`)).fields.map((field) => field.name));
        const query = selectFor(spec, columns, missing);
        return readTable(spec.table, () => client.query(query));
      };
      const users = await read(USERS);
      const tokens = await read(TOKENS);
      return { users, tokens, missing };
    } finally {
      await client.end();
    }
  }
  throw new ImportError('--from must be a sqlite:PATH or postgres:// URL (a MySQL database can be copied to SQLite or PostgreSQL first).');
}

/** The column names of one table, as the unqualified name resolves (SQLite file, search path). */
async function readColumns(table: string, read: () => string[] | Promise<string[]>): Promise<string[]> {
  try {
    return await read();
  } catch (error) {
    throw new ImportError(`The Laravel database has no readable ${table} table: ${(error as Error).message}`);
  }
}

/** Runs one table's read; any failure (no such table, a column missing) says which table. */
async function readTable(table: string, read: () => Record<string, unknown>[] | Promise<{ rows: Record<string, unknown>[] }>): Promise<Record<string, unknown>[]> {
  try {
    const result = await read();
    return Array.isArray(result) ? result : result.rows;
  } catch (error) {
    throw new ImportError(`The Laravel database has no readable ${table} table with Laravel's columns: ${(error as Error).message}`);
  }
}

const LARAVEL_TIME = /^(\d{4}-\d{2}-\d{2})[ T](\d{2}:\d{2}(?::\d{2}(?:\.\d{1,6})?)?)(Z|[+-]\d{2}(?::?\d{2})?)?$/;

/** A Laravel timestamp (text without a zone is UTC) as the ISO-8601 UTC string the service stores. */
export function laravelTimestamp(value: unknown, where: string): string | null {
  if (value === null || value === undefined) return null;
  if (value instanceof Date && !Number.isNaN(value.getTime())) return value.toISOString();
  const match = typeof value === 'string' ? LARAVEL_TIME.exec(value.trim()) : null;
  if (match !== null) {
    const zone = match[3] === undefined ? 'Z' : /^[+-]\d{2}$/.test(match[3]) ? `${match[3]}:00` : match[3];
    const ms = Date.parse(`${match[1]}T${match[2]}${zone}`);
    if (!Number.isNaN(ms)) return new Date(ms).toISOString();
  }
  throw new ImportError(`${where} is not a date: ${JSON.stringify(value)}.`);
}

function requiredText(value: unknown, where: string, max = 255): string {
  if (typeof value !== 'string' || value.trim() === '' || value.length > max) throw new ImportError(`${where} must be text of 1 to ${max} characters.`);
  return value;
}

function abilities(value: unknown, where: string): string {
  // Sanctum always writes a JSON array; a missing value grants nothing.
  if (value === null || value === undefined) return '[]';
  let parsed: unknown;
  try {
    parsed = typeof value === 'string' ? JSON.parse(value) : value;
  } catch {
    parsed = undefined;
  }
  if (!Array.isArray(parsed) || !parsed.every((item) => typeof item === 'string')) {
    throw new ImportError(`${where} must be a JSON array of ability names, got ${JSON.stringify(value)}.`);
  }
  return JSON.stringify(parsed);
}

/** Writes the Laravel rows into `db` (empty of users and tokens), in one transaction. */
export async function importLaravelRows(db: Db, rows: LaravelRows, userModel = 'App\\Models\\User'): Promise<ImportResult> {
  // A created_at that is null, or whose column is missing, becomes the time of the import (one
  // time for every row): the true date is unknown, and the import is when the row appeared here.
  // A missing updated_at is the creation date.
  const importedAt = new Date().toISOString();
  const users = rows.users.map((row, index) => {
    const id = Number(row.id);
    const where = `users #${Number.isInteger(id) ? id : `row ${index + 1}`}`;
    if (!Number.isInteger(id) || id < 1) throw new ImportError(`${where}: id must be a positive whole number.`);
    const createdAt = laravelTimestamp(row.created_at, `${where}: created_at`) ?? importedAt;
    return {
      id,
      name: requiredText(row.name, `${where}: name`),
      email: requiredText(row.email, `${where}: email`).trim(),
      password: requiredText(row.password, `${where}: password`),
      email_verified_at: laravelTimestamp(row.email_verified_at, `${where}: email_verified_at`),
      is_admin: 0,
      remember_token: null,
      created_at: createdAt,
      updated_at: laravelTimestamp(row.updated_at, `${where}: updated_at`) ?? createdAt,
    };
  });
  // Laravel's unique index is on the email as written; ours ignores case, so say which clash.
  const seen = new Map<string, number>();
  for (const user of users) {
    const other = seen.get(user.email.toLowerCase());
    if (other !== undefined) throw new ImportError(`users #${other} and #${user.id} have the same email apart from case (${user.email}); emails are unique whatever their case here. Change one in Laravel first.`);
    seen.set(user.email.toLowerCase(), user.id);
  }

  const userIds = new Set(users.map((user) => user.id));
  let skippedTokens = 0;
  const tokens: (Insertable<PersonalAccessTokensTable> & { id: number })[] = [];
  for (const row of rows.tokens) {
    const id = Number(row.id);
    const where = `personal_access_tokens #${id}`;
    if (row.tokenable_type !== userModel || !userIds.has(Number(row.tokenable_id))) {
      skippedTokens += 1;
      continue;
    }
    if (!Number.isInteger(id) || id < 1) throw new ImportError(`${where}: id must be a positive whole number.`);
    // The exact form the token check reads (digestBytes): anything else would match no secret.
    if (typeof row.token !== 'string' || digestBytes(row.token).length === 0) throw new ImportError(`${where}: token must be the 64 hex characters of a SHA-256 digest.`);
    const createdAt = laravelTimestamp(row.created_at, `${where}: created_at`) ?? importedAt;
    tokens.push({
      id,
      user_id: Number(row.tokenable_id),
      name: requiredText(row.name, `${where}: name`),
      token: row.token,
      abilities: abilities(row.abilities, `${where}: abilities`),
      last_used_at: laravelTimestamp(row.last_used_at, `${where}: last_used_at`),
      expires_at: laravelTimestamp(row.expires_at, `${where}: expires_at`),
      created_at: createdAt,
      updated_at: laravelTimestamp(row.updated_at, `${where}: updated_at`) ?? createdAt,
    });
  }

  await writeTransaction(db, async (trx) => {
    const count = async (table: 'users' | 'personal_access_tokens') =>
      Number((await trx.selectFrom(table).select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow()).n);
    if ((await count('users')) > 0 || (await count('personal_access_tokens')) > 0) {
      throw new ImportError('This database already has users or tokens: the import keeps Laravel\'s ids, so it only goes into a new database (db:migrate on an empty one, no db:seed).');
    }
    // In slices: SQLite allows a few thousand parameters per statement.
    for (let i = 0; i < users.length; i += 500) await trx.insertInto('users').values(users.slice(i, i + 500)).execute();
    for (let i = 0; i < tokens.length; i += 500) await trx.insertInto('personal_access_tokens').values(tokens.slice(i, i + 500)).execute();
    if (db.dialect === 'postgres') {
      // Explicit ids leave the serial sequences behind: the next account or token must come after.
      for (const table of ['users', 'personal_access_tokens']) {
        await sql`select setval(pg_get_serial_sequence(${table}, 'id'), coalesce((select max(id) from ${sql.table(table)}), 0) + 1, false)`.execute(trx);
      }
    }
  });
  return { users: users.length, tokens: tokens.length, skippedTokens, missing: rows.missing ?? [] };
}

