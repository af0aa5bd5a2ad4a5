// One owner for each account operation (issue 24 §2), read off the source: an existing users row
// is written (updated or deleted) only by the modules that own a part of it, so that no face and
// no other module changes an email, a password or an account behind the owners' rules.
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative, resolve } from 'node:path';
import { describe, it } from 'node:test';

const SRC = resolve(import.meta.dirname, '../../src');

/** The owners, and what each writes. */
const OWNERS: Record<string, string> = {
  'modules/users/': 'name, password (change, first password, reset), admin flag: UserService',
  'modules/two-factor/two-factor.service.ts': 'the two-factor columns',
  'modules/verification/verification.service.ts': 'email_verified_at, from the signed link',
  'modules/email-change/email-change.service.ts': 'email, from the link mailed to the new address',
  'modules/admin/admin.service.ts': "the panel's edit of an account, audited",
  'modules/account-deletion/account-deletion.service.ts': 'the one deletion',
  'modules/password-reset/password-reset.service.ts': 'an unverified account taken back by its reset',
};

const WRITES = [/updateTable\(\s*'users'\s*\)/, /deleteFrom\(\s*'users'\s*\)/, /\bupdateUser\(/];

function sources(dir = SRC): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return sources(path);
    return entry.name.endsWith('.ts') ? [relative(SRC, path)] : [];
  });
}

describe('the owners of an account', () => {
  it('only the owners update or delete a users row', () => {
    const others = sources()
      .filter((file) => !file.startsWith('db/migrations/'))
      .filter((file) => !Object.keys(OWNERS).some((owner) => file.startsWith(owner)))
      .filter((file) => {
        // The panel's route calls AdminService.updateUser: a call of the owner, not a write.
        const text = readFileSync(join(SRC, file), 'utf8').replace(/\.services\.admin\.updateUser\(/g, '');
        return WRITES.some((write) => write.test(text));
      });
    assert.deepEqual(others, []);
  });
});
