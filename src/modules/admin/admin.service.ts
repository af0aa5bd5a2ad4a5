// What the administration panel does, apart from what the users, posts, tokens and settings
// services already do: the dashboard figures, the tables, and the rules only an administrator
// meets (one cannot remove one's own access; the panel never makes an administrator).
import type { Config } from '../../config.js';
import type { Db } from '../../db/connect.js';
import { writeTransaction } from '../../db/connect.js';
import { isUniqueViolation } from '../../db/errors.js';
import type { Post, SettingRow, User } from '../../db/types.js';
import { AppError, invalid } from '../shared/errors.js';
import { effectiveExpiry } from '../tokens/expiry.js';
import { parseAbilities } from '../tokens/abilities.js';
import { TAKEN_EMAIL } from '../users/users.service.js';
import { emailTaken, findUserById, updateUser } from '../users/users.repository.js';
import {
  countActiveTokens,
  countPostsMatching,
  countTokens,
  countUsers,
  deleteUser,
  findPostById,
  findSetting,
  findTokenById,
  latestPosts,
  listPostsMatching,
  listTokens,
  listUsers,
  postCountsByStatus,
  userCounts,
  type PostQuery,
  type PostRow,
  type TokenListRow,
  type TokenQuery,
  type UserListRow,
  type UserQuery,
} from './admin.repository.js';
import { paged, type Paginated } from './listing.js';

export type DashboardStats = {
  users: number;
  verifiedUsers: number;
  publishedPosts: number;
  draftPosts: number;
  archivedPosts: number;
  activeTokens: number;
};

/** A token as the panel lists it: abilities decoded, the effective expiry computed. */
export type TokenListItem = Omit<TokenListRow, 'abilities' | 'expires_at'> & { abilities: string[]; expires_at: string | null; expired: boolean };

/** The fields the panel's user form edits. */
export type UserChanges = { name: string; email: string; verified: boolean; admin: boolean };

/** The panel's rules, as message keys of the admin locale files (admin.json). */
export const RULES = {
  cannotDemoteSelf: 'admin.users.errors.demote_self',
  cannotDeleteSelf: 'admin.users.errors.delete_self',
  promoteByCommand: 'admin.users.errors.promote_by_command',
  settingExists: 'admin.settings.errors.exists',
} as const;

export class AdminService {
  constructor(
    private readonly db: Db,
    private readonly config: Pick<Config, 'tokenExpirationMinutes'>,
  ) {}

  async dashboard(now = new Date()): Promise<DashboardStats> {
    const [users, posts, activeTokens] = await Promise.all([
      userCounts(this.db.kysely),
      postCountsByStatus(this.db.kysely),
      countActiveTokens(this.db.kysely, now, this.config.tokenExpirationMinutes),
    ]);
    return {
      users: users.total,
      verifiedUsers: users.verified,
      publishedPosts: posts.published ?? 0,
      draftPosts: posts.draft ?? 0,
      archivedPosts: posts.archived ?? 0,
      activeTokens,
    };
  }

  latestPosts(limit = 5): Promise<PostRow[]> {
    return latestPosts(this.db.kysely, limit);
  }

  // ---- users ----

  async users(query: UserQuery, page: number, perPage: number): Promise<Paginated<UserListRow>> {
    return paged(page, perPage, () => countUsers(this.db.kysely, query), (limit, offset) => listUsers(this.db.kysely, query, limit, offset));
  }

  findUser(id: number): Promise<User | undefined> {
    return findUserById(this.db.kysely, id);
  }

  /**
   * Saves the panel's user form. The acting administrator cannot take their own access away,
   * and the panel can only take access away: administrators are made with the CLI
   * (admin:create, admin:promote), which the spec makes the only way in.
   */
  async updateUser(actor: Pick<User, 'id'>, target: User, changes: UserChanges): Promise<{ user: User; fields: string[] }> {
    const wasAdmin = Number(target.is_admin) === 1;
    if (target.id === actor.id && !changes.admin) throw invalid({ admin: [{ key: RULES.cannotDemoteSelf }] });
    if (!wasAdmin && changes.admin) throw invalid({ admin: [{ key: RULES.promoteByCommand }] });
    const now = new Date().toISOString();
    const set: Partial<User> = {};
    if (changes.name !== target.name) set.name = changes.name;
    if (changes.email !== target.email) set.email = changes.email;
    // Ticking "verified" keeps the original date when there is one.
    if (changes.verified !== (target.email_verified_at !== null)) set.email_verified_at = changes.verified ? now : null;
    if (changes.admin !== wasAdmin) set.is_admin = changes.admin ? 1 : 0;
    const fields = Object.keys(set).map((key) => (key === 'email_verified_at' ? 'verified' : key === 'is_admin' ? 'admin' : key));
    if (fields.length === 0) return { user: target, fields };
    try {
      const user = await writeTransaction(this.db, async (trx) => {
        if (set.email !== undefined && (await emailTaken(trx, set.email, target.id))) throw invalid({ email: [TAKEN_EMAIL] });
        return updateUser(trx, target.id, { ...set, updated_at: now });
      });
      if (user === undefined) throw new AppError(404, 'Not Found.');
      return { user, fields };
    } catch (error) {
      if (isUniqueViolation(error)) throw invalid({ email: [TAKEN_EMAIL] });
      throw error;
    }
  }

  /** Deletes an account; its tokens and sessions go with it (foreign keys), its posts stay. */
  async deleteUser(actor: Pick<User, 'id'>, target: Pick<User, 'id'>): Promise<void> {
    if (target.id === actor.id) throw new AppError(403, RULES.cannotDeleteSelf);
    await deleteUser(this.db.kysely, target.id);
  }

  // ---- posts ----

  async posts(query: PostQuery, page: number, perPage: number): Promise<Paginated<PostRow>> {
    return paged(
      page,
      perPage,
      () => countPostsMatching(this.db.kysely, query),
      (limit, offset) => listPostsMatching(this.db.kysely, query, limit, offset),
    );
  }

  findPost(id: number): Promise<Post | undefined> {
    return findPostById(this.db.kysely, id);
  }

  // ---- tokens ----

  async tokens(query: TokenQuery, page: number, perPage: number, now = new Date()): Promise<Paginated<TokenListItem>> {
    return paged(
      page,
      perPage,
      () => countTokens(this.db.kysely, query),
      async (limit, offset) => (await listTokens(this.db.kysely, query, limit, offset)).map((row) => this.presentToken(row, now)),
    );
  }

  async findToken(id: number, now = new Date()): Promise<TokenListItem | undefined> {
    const row = await findTokenById(this.db.kysely, id);
    return row === undefined ? undefined : this.presentToken(row, now);
  }

  // The expiry that applies (the same rules as the API's token check).
  private presentToken(row: TokenListRow, now: Date): TokenListItem {
    const expires = effectiveExpiry(row.created_at, row.expires_at, this.config.tokenExpirationMinutes);
    return {
      ...row,
      abilities: parseAbilities(row.abilities),
      expires_at: expires === null ? null : new Date(expires).toISOString(),
      expired: expires !== null && expires <= now.getTime(),
    };
  }

  // ---- settings ----

  findSetting(key: string): Promise<SettingRow | undefined> {
    return findSetting(this.db.kysely, key);
  }
}
