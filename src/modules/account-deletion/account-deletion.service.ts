// Deleting one's own account (security page): the audit line first, while the row still names
// its owner, then every way into the account, then the row. The foreign keys cascade to the
// sessions, API tokens, passkeys, remember-me tokens, known devices and pending email changes;
// they are deleted here explicitly all the same, so that no way in outlives the account even on a
// database whose foreign keys were off, and the password reset token (keyed by address, no
// foreign key) goes too. The audit line stays: its user_id goes null, the name and email remain.
import type { Db } from '../../db/connect.js';
import { writeTransaction } from '../../db/connect.js';
import type { User } from '../../db/types.js';
import type { AuditService } from '../audit/audit.service.js';

export class AccountDeletionService {
  constructor(
    private readonly db: Db,
    private readonly audit: Pick<AuditService, 'record'>,
  ) {}

  /** Deletes the user and everything that signs them in; the audit log keeps 'account.deleted'. */
  async delete(user: Pick<User, 'id' | 'name' | 'email'>, ip: string | null): Promise<void> {
    await this.audit.record(user, 'account.deleted', { type: 'user', id: user.id, label: user.email }, {}, ip);
    await writeTransaction(this.db, async (trx) => {
      await trx.deleteFrom('sessions').where((eb) => eb.or([eb('user_id', '=', user.id), eb('admin_user_id', '=', user.id)])).execute();
      await trx.deleteFrom('personal_access_tokens').where('user_id', '=', user.id).execute();
      await trx.deleteFrom('remember_tokens').where('user_id', '=', user.id).execute();
      await trx.deleteFrom('passkeys').where('user_id', '=', user.id).execute();
      await trx.deleteFrom('password_reset_tokens').where('email', '=', user.email.toLowerCase()).execute();
      await trx.deleteFrom('users').where('id', '=', user.id).execute();
    });
  }
}
