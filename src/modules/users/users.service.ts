// Accounts: checking credentials, creating users, updating profiles and passwords. Used by the
// API, the pages, the admin panel and the CLI alike.
import type { Db } from '../../db/connect.js';
import { writeTransaction } from '../../db/connect.js';
import type { User } from '../../db/types.js';
import type { MaybePromise } from '../../lib/maybe-promise.js';
import { PasswordHasher } from '../passwords/hasher.js';
import { translate, type Message } from '../i18n/translator.js';
import { invalid } from '../shared/errors.js';
import { isUniqueViolation } from '../../db/errors.js';
import { emailTaken, findUserByEmail, findUserById, insertUser, updateUser } from './users.repository.js';

/** A taken address, as a message key: each face answers in its reader's language. */
export const TAKEN_EMAIL: Message = { key: 'validation.unique', attribute: 'email' };
/** Its English text, as the API and the CLI answer. */
export const EMAIL_TAKEN = translate('en', TAKEN_EMAIL);

export type NewAccount = {
  name: string;
  email: string;
  password: string;
  verified?: boolean;
  admin?: boolean;
};

export class UserService {
  /**
   * `findUser`: how a user is read by id; the app passes the reader kept in memory while the
   * database is unchanged (src/perf/kept-reads.ts), which may answer at once.
   */
  constructor(
    private readonly db: Db,
    private readonly findUser: (id: number) => MaybePromise<User | undefined> = (id) => findUserById(db.kysely, id),
    /** The argon2id cost of ARGON_MEMORY and ARGON_TIME (config.ts); every password check of the account goes through it. */
    readonly passwords: PasswordHasher = new PasswordHasher(),
  ) {}

  /**
   * Returns the user whose email and password match, else null. An unknown email still costs
   * one argon2 verification, so the answer time does not tell whether the account exists.
   * Outdated hashes (bcrypt from a Laravel import, older argon2 settings) are upgraded here.
   */
  async attempt(email: string, password: string): Promise<User | null> {
    const user = await findUserByEmail(this.db.kysely, email);
    if (user === undefined) return this.passwords.verifyDummy(password).then(() => null);
    if (!(await this.passwords.verify(user.password, password))) return null;
    if (this.passwords.needsRehash(user.password)) {
      await updateUser(this.db.kysely, user.id, { password: await this.passwords.hash(password) });
    }
    return user;
  }

  async findById(id: number): Promise<User | undefined> {
    return this.findUser(id);
  }

  findByEmail(email: string): Promise<User | undefined> {
    return findUserByEmail(this.db.kysely, email);
  }

  /** Creates an account; 422 on `email` when the address is taken. */
  async create(account: NewAccount): Promise<User> {
    const now = new Date().toISOString();
    const password = await this.passwords.hash(account.password);
    try {
      return await writeTransaction(this.db, async (trx) => {
        if (await emailTaken(trx, account.email)) throw invalid({ email: [TAKEN_EMAIL] });
        return insertUser(trx, {
          name: account.name,
          email: account.email,
          password,
          email_verified_at: account.verified === true ? now : null,
          is_admin: account.admin === true ? 1 : 0,
          remember_token: null,
          locale: null,
          created_at: now,
          updated_at: now,
        });
      });
    } catch (error) {
      if (isUniqueViolation(error)) throw invalid({ email: [TAKEN_EMAIL] });
      throw error;
    }
  }

  /**
   * Changes the name. Only the name is ever written, whatever the caller sent: an address
   * changes through a pending change confirmed from the new mailbox (EmailChangeService, started
   * by AuthService.updateProfile), never here.
   */
  async updateProfile(user: Pick<User, 'id'>, changes: { name: string }): Promise<User> {
    const updated = await updateUser(this.db.kysely, user.id, { name: changes.name, updated_at: new Date().toISOString() });
    if (updated === undefined) throw new Error(`user ${user.id} vanished during update`);
    return updated;
  }

  /** Checks the current password, then stores the new one; 422 on `current_password` when wrong. */
  async changePassword(userId: number, currentPassword: string, newPassword: string): Promise<void> {
    const user = await findUserById(this.db.kysely, userId);
    if (user === undefined || !(await this.passwords.verify(user.password, currentPassword))) {
      throw invalid({ current_password: [{ key: 'validation.current_password' }] });
    }
    await this.setPassword(userId, newPassword);
  }

  /**
   * Stores a first password for an account that has none (made through a provider). The update
   * is conditional, so it can never replace a password: false when the account already has one.
   */
  async setFirstPassword(userId: number, newPassword: string): Promise<boolean> {
    const result = await this.db.kysely
      .updateTable('users')
      .set({ password: await this.passwords.hash(newPassword), updated_at: new Date().toISOString() })
      .where('id', '=', userId)
      .where('password', 'is', null)
      .executeTakeFirst();
    return Number(result.numUpdatedRows) === 1;
  }

  /** Stores a new password hash and forgets the remember-me token. */
  async setPassword(userId: number, newPassword: string): Promise<void> {
    await updateUser(this.db.kysely, userId, {
      password: await this.passwords.hash(newPassword),
      remember_token: null,
      updated_at: new Date().toISOString(),
    });
  }

  async setAdmin(email: string, admin: boolean): Promise<User | null> {
    const user = await findUserByEmail(this.db.kysely, email);
    if (user === undefined) return null;
    return (await updateUser(this.db.kysely, user.id, { is_admin: admin ? 1 : 0, updated_at: new Date().toISOString() })) ?? null;
  }
}

/** The panel's access check: one place decides who may open /admin. */
export function canAccessPanel(user: Pick<User, 'is_admin'>): boolean {
  return Number(user.is_admin) === 1;
}
