// Queries on the users table. Plain functions of a Kysely handle (or a transaction).
import { sql, type Kysely } from 'kysely';
import type { Database, NewUser, User, UserUpdate } from '../../db/types.js';

type Q = Kysely<Database>;

/** Finds a user by email, case-insensitively (uses the lower(email) unique index). */
export function findUserByEmail(db: Q, email: string): Promise<User | undefined> {
  return db
    .selectFrom('users')
    .selectAll()
    .where(sql<string>`lower(email)`, '=', email.toLowerCase())
    .executeTakeFirst();
}

export function findUserById(db: Q, id: number): Promise<User | undefined> {
  return db.selectFrom('users').selectAll().where('id', '=', id).executeTakeFirst();
}

/** True when another user (not `exceptId`) already has this email, whatever its case. */
export async function emailTaken(db: Q, email: string, exceptId?: number): Promise<boolean> {
  let query = db.selectFrom('users').select('id').where(sql<string>`lower(email)`, '=', email.toLowerCase());
  if (exceptId !== undefined) query = query.where('id', '!=', exceptId);
  return (await query.executeTakeFirst()) !== undefined;
}

export async function insertUser(db: Q, user: NewUser): Promise<User> {
  return db.insertInto('users').values(user).returningAll().executeTakeFirstOrThrow();
}

export async function updateUser(db: Q, id: number, changes: UserUpdate): Promise<User | undefined> {
  return db.updateTable('users').set(changes).where('id', '=', id).returningAll().executeTakeFirst();
}
