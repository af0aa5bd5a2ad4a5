// What the administration panel does: the dashboard figures, the tables, the rules only an
// administrator meets (one cannot remove one's own access; the panel never makes an
// administrator), and every change made from the panel, each through the service that owns the
// data and each leaving its audit line.
import type { Config } from '../../config.js';
import type { Db } from '../../db/connect.js';
import { writeTransaction } from '../../db/connect.js';
import { isUniqueViolation } from '../../db/errors.js';
import type { Post, SettingRow, User } from '../../db/types.js';
import type { AccountDeletionService } from '../account-deletion/account-deletion.service.js';
import type { Acting, AuditService } from '../audit/audit.service.js';
import type { EmailChangeService } from '../email-change/email-change.service.js';
import { checkNewPassword } from '../passwords/policy.js';
import type { PostForm, PostInput, PostService } from '../posts/posts.service.js';
import type { PostWithAuthor } from '../posts/posts.repository.js';
import { AppError, invalid, type FieldMessages } from '../shared/errors.js';
import type { TokenService } from '../tokens/tokens.service.js';
import { effectiveExpiry } from '../tokens/expiry.js';
import { parseAbilities } from '../tokens/abilities.js';
import { TAKEN_EMAIL, type UserService } from '../users/users.service.js';
import { emailTaken, findUserById, updateUser } from '../users/users.repository.js';
import {
  countActiveTokens,
  countTokens,
  findPostById,
  findSetting,
  findTokenById,
  latestPosts,
  listTokens,
  postCountsByStatus,
  postsTable,
  usersTable,
  userCounts,
  type PostQuery,
  type PostListRow,
  type PostRow,
  type TableRequest,
  type TokenListRow,
  type TokenQuery,
  type UserListRow,
  type UserQuery,
} from './admin.repository.js';
import type { MaybePromise } from '../../lib/maybe-promise.js';
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
/** The panel's form for a new account. */
export type NewUserForm = { name: string; email: string; password: string; password_confirmation: string | undefined; verified: boolean };

export type AdminDeps = {
  users: Pick<UserService, 'create'>;
  posts: Pick<PostService, 'create' | 'saveForm' | 'update' | 'remove'>;
  tokens: Pick<TokenService, 'revoke' | 'revokeAll'>;
  audit: Pick<AuditService, 'recordBy'>;
  /** The one deletion of an account (the security page's and the CLI's too). */
  accountDeletion: Pick<AccountDeletionService, 'erase'>;
  /** An address set by an administrator drops the owner's pending change. */
  emailChanges: Pick<EmailChangeService, 'withdraw'>;
};

/** Where the panel's tables of posts and users are read from (services.ts hands it kept ones). */
export type AdminTables = {
  posts: (request: TableRequest<PostQuery>) => MaybePromise<Paginated<PostListRow>>;
  users: (request: TableRequest<UserQuery>) => MaybePromise<Paginated<UserListRow>>;
};

/** The names of the fields whose value differs between two versions of a post. */
function changedFields(before: Post, after: Post): string[] {
  return (['title', 'slug', 'excerpt', 'body', 'locale', 'status', 'published_at', 'author_id'] as const).filter((key) => before[key] !== after[key]);
}

/** The panel's rules, as message keys of the admin locale files (admin.json). */
export const RULES = {
  cannotDemoteSelf: 'admin.users.errors.demote_self',
  cannotDeleteSelf: 'admin.users.errors.delete_self',
  promoteByCommand: 'admin.users.errors.promote_by_command',
} as const;

export class AdminService {
  constructor(
    private readonly db: Db,
    private readonly config: Pick<Config, 'tokenExpirationMinutes'>,
    private readonly deps: AdminDeps,
    private readonly tables: AdminTables = { posts: postsTable(db), users: usersTable(db) },
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
    return this.tables.users({ query, page, perPage });
  }

  findUser(id: number): Promise<User | undefined> {
    return findUserById(this.db.kysely, id);
  }

  /**
   * Creates an account from the panel, verified or not, never an administrator: that is
   * admin:create / admin:promote. The schema's errors (`earlier`) and the password rules show
   * at once.
   */
  async createUser(by: Acting, form: NewUserForm, locale: string, earlier: FieldMessages = {}): Promise<User> {
    const errors: FieldMessages = { ...earlier };
    if (form.password !== '' && errors.password === undefined) Object.assign(errors, checkNewPassword(form.password, form.password_confirmation, locale));
    if (Object.keys(errors).length > 0) throw invalid(errors);
    const user = await this.deps.users.create({ name: form.name, email: form.email, password: form.password, verified: form.verified, admin: false });
    await this.deps.audit.recordBy(by, 'user.created', { type: 'user', id: user.id, label: user.email });
    return user;
  }

  /**
   * Saves the panel's user form. The acting administrator cannot take their own access away,
   * and the panel can only take access away: administrators are made with the CLI
   * (admin:create, admin:promote), which the spec makes the only way in.
   */
  async updateUser(by: Acting, target: User, changes: UserChanges): Promise<User> {
    const user = await this.saveUser(by.actor, target, changes);
    // An administrator's address is an administrative act: at once, audited, and the owner's
    // pending change goes, so an older link cannot undo it.
    if (user.fields.includes('email')) await this.deps.emailChanges.withdraw(target.id);
    if (user.fields.length > 0) await this.deps.audit.recordBy(by, 'user.updated', { type: 'user', id: user.user.id, label: user.user.email }, { fields: user.fields });
    return user.user;
  }

  private async saveUser(actor: Pick<User, 'id'>, target: User, changes: UserChanges): Promise<{ user: User; fields: string[] }> {
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

  /**
   * Deletes an account through the one deletion (AccountDeletionService.erase: every way in, the
   * password-reset row, the account; its posts stay), behind the panel's rule (never oneself)
   * and with the panel's audit line.
   */
  async deleteUser(by: Acting, target: Pick<User, 'id' | 'email'>): Promise<void> {
    if (target.id === by.actor.id) throw new AppError(403, RULES.cannotDeleteSelf);
    await this.deps.accountDeletion.erase(target);
    await this.deps.audit.recordBy(by, 'user.deleted', { type: 'user', id: target.id, label: target.email });
  }

  // ---- posts ----

  async posts(query: PostQuery, page: number, perPage: number): Promise<Paginated<PostListRow>> {
    return this.tables.posts({ query, page, perPage });
  }

  findPost(id: number): Promise<Post | undefined> {
    return findPostById(this.db.kysely, id);
  }

  /** Saves the editor form (PostService's rules), a new post when `post` is null. */
  async savePost(by: Acting, post: Post | null, form: PostForm, earlier: FieldMessages = {}): Promise<PostWithAuthor> {
    return this.auditedSave(by, post, await this.deps.posts.saveForm(post, by.actor.id, form, earlier));
  }

  /** Creates a post from the API's fields (PostService's rules), audited as the panel's editor is. */
  async createPost(by: Acting, input: PostInput & { title: string }): Promise<PostWithAuthor> {
    return this.auditedSave(by, null, await this.deps.posts.create(by.actor.id, input));
  }

  /** Changes the API's fields of a post, audited as the panel's editor is (nothing changed, no line). */
  async updatePost(by: Acting, post: Post, input: PostInput): Promise<PostWithAuthor> {
    return this.auditedSave(by, post, await this.deps.posts.update(post, input));
  }

  // The one audit line of a saved post, whichever face saved it: post.created, or post.updated
  // with the names of the fields that changed.
  private async auditedSave(by: Acting, before: Post | null, saved: PostWithAuthor): Promise<PostWithAuthor> {
    if (before === null) {
      await this.deps.audit.recordBy(by, 'post.created', { type: 'post', id: saved.id, label: saved.title });
    } else {
      const fields = changedFields(before, saved);
      if (fields.length > 0) await this.deps.audit.recordBy(by, 'post.updated', { type: 'post', id: before.id, label: saved.title }, { fields });
    }
    return saved;
  }

  /** Publishes (keeping the date of a post published before; a first publication is dated now) or sends back to draft. */
  async setPostStatus(by: Acting, post: Post, status: 'published' | 'draft'): Promise<PostWithAuthor> {
    const updated = await this.deps.posts.update(post, { status });
    await this.deps.audit.recordBy(by, status === 'published' ? 'post.published' : 'post.unpublished', { type: 'post', id: post.id, label: post.title });
    return updated;
  }

  async deletePost(by: Acting, post: Post): Promise<void> {
    await this.deps.posts.remove(post);
    await this.deps.audit.recordBy(by, 'post.deleted', { type: 'post', id: post.id, label: post.title });
  }

  // ---- tokens ----

  async tokens(query: TokenQuery, page: number, perPage: number, now = new Date()): Promise<Paginated<TokenListItem>> {
    return paged(
      page,
      perPage,
      () => countTokens(this.db, query),
      async (limit, offset) => (await listTokens(this.db, query, limit, offset)).map((row) => this.presentToken(row, now)),
    );
  }

  async findToken(id: number, now = new Date()): Promise<TokenListItem | undefined> {
    const row = await findTokenById(this.db.kysely, id);
    return row === undefined ? undefined : this.presentToken(row, now);
  }

  async revokeToken(by: Acting, token: TokenListItem): Promise<void> {
    await this.deps.tokens.revoke(token.id);
    await this.deps.audit.recordBy(by, 'token.revoked', { type: 'token', id: token.id, label: `${token.name} (${token.user_email})` });
  }

  /** Revokes every token of a user; the number revoked. */
  async revokeAllTokens(by: Acting, user: Pick<User, 'id' | 'email'>): Promise<number> {
    const count = await this.deps.tokens.revokeAll(user.id);
    await this.deps.audit.recordBy(by, 'tokens.revoked_all', { type: 'user', id: user.id, label: user.email }, { count });
    return count;
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

  // ---- settings (their changes are the settings service's: src/modules/settings) ----

  findSetting(key: string): Promise<SettingRow | undefined> {
    return findSetting(this.db.kysely, key);
  }
}

