// user:2fa-reset: turns a user's two-factor sign-in off (a lost phone and lost recovery codes),
// with a line in the panel's audit log naming the command line and the OS user as the actor.
import { commandLineActor } from '../modules/audit/audit.service.js';
import { twoFactorEnabled } from '../modules/two-factor/two-factor.service.js';
import { CliError, text, usageError, type Command } from './command.js';

export const twoFactorReset: Command = {
  summary: "Turn off a user's two-factor sign-in",
  usage: '--email EMAIL',
  description: [
    'For a user who lost both the authenticator app and the recovery codes: deletes the',
    'two-factor secret and the recovery codes, so the password alone signs in again. The',
    'audit log of the panel records it, with the operating-system user who ran the command.',
  ],
  options: [{ name: 'email', type: 'string', value: 'EMAIL', description: 'Email of the account' }],
  positionals: [],
  async run(args, rt) {
    const email = text(args, 'email');
    if (email === undefined || email === '') throw usageError('Missing --email.', 'user:2fa-reset');
    const services = rt.services();
    const user = await services.users.findByEmail(email);
    if (user === undefined) throw new CliError(`No user has the email ${email}.`);
    if (user.two_factor_secret === null) {
      rt.out(`${user.email} does not use two-factor sign-in; nothing changed.`);
      return;
    }
    const wasOn = twoFactorEnabled(user);
    await services.twoFactor.disable(user.id);
    await services.audit.record(commandLineActor(), 'user.two_factor_reset', { type: 'user', id: user.id, label: user.email });
    rt.out(wasOn ? `Two-factor sign-in is now off for ${user.email}.` : `The unfinished two-factor set-up of ${user.email} was removed.`);
  },
};
