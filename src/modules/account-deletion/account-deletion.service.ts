// Deleting an account: one function (erase) for every face — the security page (oneself), the
// panel (another account, behind its "not yourself" rule) and the CLI (user:delete) — so that
// each removes the same rows. Every way into the account goes, then the row: the foreign keys
// cascade to the sessions, API tokens, passkeys, remember-me tokens, known devices, pending email
// changes and provider identities; they are deleted here explicitly all the same, so that no way
// in outlives the account even on a database whose foreign keys were off, and the password reset
// token (keyed by address, no foreign key) goes too. The audit log keeps its lines: their user_id
// goes null, the name and email remain.
import type { Db } from '../../db/connect.js';
import { writeTransaction } from '../../db/connect.js';
import type { User } from '../../db/types.js';
import type { AuditService } from '../audit/audit.service.js';

export class AccountDeletionService {
  constructor(
    private readonly db: Db,
    private readonly audit: Pick<AuditService, 'record'>,
  ) {}

  /** Deletes one's own account (the security page); the audit log keeps 'account.deleted'. */
  async deleteOwnAccount(user: Pick<User, 'id' | 'name' | 'email'>, ip: string | null): Promise<void> {
    // The audit line first, while the row still names its owner.
    await this.audit.record(user, 'account.deleted', { type: 'user', id: user.id, label: user.email }, {}, ip);
    await this.erase(user);
  }

  /** The one deletion of an account: every row that signs the user in or waits for them, then the user. */
  async erase(user: Pick<User, 'id' | 'email'>): Promise<void> {
    await writeTransaction(this.db, async (trx) => {
      await trx.deleteFrom('sessions').where((eb) => eb.or([eb('user_id', '=', user.id), eb('admin_user_id', '=', user.id)])).execute();
      await trx.deleteFrom('personal_access_tokens').where('user_id', '=', user.id).execute();
      await trx.deleteFrom('remember_tokens').where('user_id', '=', user.id).execute();
      await trx.deleteFrom('passkeys').where('user_id', '=', user.id).execute();
      await trx.deleteFrom('email_changes').where('user_id', '=', user.id).execute();
      await trx.deleteFrom('known_devices').where('user_id', '=', user.id).execute();
      await trx.deleteFrom('identities').where('user_id', '=', user.id).execute();
      await trx.deleteFrom('password_reset_tokens').where('email', '=', user.email.toLowerCase()).execute();
      await trx.deleteFrom('users').where('id', '=', user.id).execute();
    });
  }
}
