// Account commands: create a user or an administrator, give or take administrator rights, delete
// a user (the same deletion as the security page's and the panel's). The
// fields are checked with the API's rules and messages. Each change leaves one line in the panel's
// audit log naming the command line (and the OS user) as the actor; a refused command leaves none.
import { Type } from '@sinclair/typebox';
import type { ErrorObject } from 'ajv';
import { formatValidationErrors, validatorCompiler } from '../http/shared/validation.js';
import { commandLineActor } from '../modules/audit/audit.service.js';
import { checkNewPassword } from '../modules/passwords/policy.js';
import { ValidationError, type FieldErrors } from '../modules/shared/errors.js';
import { EMAIL_TAKEN } from '../modules/users/users.service.js';
import { CliError, PROGRAM, text, usageError, type Args, type Command, type Option } from './command.js';
import type { Runtime } from './runtime.js';

const AccountFields = Type.Object({
  name: Type.String({ minLength: 1, maxLength: 255 }),
  email: Type.String({ format: 'email', minLength: 1, maxLength: 255 }),
});
const checkAccountFields = validatorCompiler({ schema: AccountFields, method: 'POST', url: '/cli', httpPart: 'body' }) as unknown as ((
  data: unknown,
) => boolean) & { errors?: ErrorObject[] | null };

// The fields of a new account, as options of user:create and admin:create.
const ACCOUNT_OPTIONS: Option[] = [
  { name: 'name', type: 'string', value: 'NAME', description: 'Display name (1 to 255 characters)' },
  { name: 'email', type: 'string', value: 'EMAIL', description: 'Login email, unique' },
  { name: 'password', type: 'string', value: 'PASSWORD', description: 'At least 8 characters' },
];

type Account = { name: string; email: string; password: string };

function validateAccount(account: Account): void {
  const errors: FieldErrors = {};
  if (!checkAccountFields({ name: account.name, email: account.email })) {
    Object.assign(errors, formatValidationErrors(checkAccountFields.errors ?? []).errors);
  }
  // The CLI has no confirmation field: the password is its own confirmation.
  Object.assign(errors, checkNewPassword(account.password, account.password));
  if (Object.keys(errors).length > 0) throw new ValidationError(errors);
}

async function createAccount(rt: Runtime, account: Account, flags: { verified: boolean; admin: boolean }) {
  validateAccount(account);
  try {
    const services = rt.services();
    const user = await services.users.create({ ...account, ...flags });
    await services.audit.record(commandLineActor(), flags.admin ? 'admin.created' : 'user.created', { type: 'user', id: user.id, label: user.email });
    return user;
  } catch (error) {
    if (flags.admin && error instanceof ValidationError && error.errors.email?.includes(EMAIL_TAKEN)) {
      throw new CliError(`${EMAIL_TAKEN} To make that user an administrator: ${PROGRAM} admin:promote ${account.email}`);
    }
    throw error;
  }
}

async function setAdmin(rt: Runtime, args: Args, admin: boolean): Promise<void> {
  const email = args.positionals[0] ?? '';
  const services = rt.services();
  const users = services.users;
  const user = await users.findByEmail(email);
  if (user === undefined) throw new CliError(`No user has the email ${email}.`);
  if ((Number(user.is_admin) === 1) === admin) {
    rt.out(`${user.email} ${admin ? 'is already' : 'is not'} an administrator; nothing changed.`);
    return;
  }
  await users.setAdmin(email, admin);
  await services.audit.record(commandLineActor(), admin ? 'admin.promoted' : 'admin.demoted', { type: 'user', id: user.id, label: user.email });
  rt.out(admin ? `${user.email} is now an administrator.` : `${user.email} is no longer an administrator.`);
}

export const userCreate: Command = {
  summary: 'Create a user account',
  usage: '--name NAME --email EMAIL --password PASSWORD [--verified]',
  description: ['Creates a user who is not an administrator (see admin:create).'],
  options: [
    ...ACCOUNT_OPTIONS,
    { name: 'verified', type: 'boolean', description: 'Mark the email address as verified' },
  ],
  positionals: [],
  async run(args, rt) {
    const missing = ['name', 'email', 'password'].filter((name) => text(args, name) === undefined);
    if (missing.length > 0) throw usageError(`Missing ${missing.map((m) => `--${m}`).join(', ')}.`, 'user:create');
    const account = { name: text(args, 'name') ?? '', email: text(args, 'email') ?? '', password: String(args.values.password) };
    const user = await createAccount(rt, account, { verified: args.values.verified === true, admin: false });
    rt.out(`Created user #${user.id} ${user.name} <${user.email}>${user.email_verified_at === null ? ' (email not verified)' : ''}.`);
  },
};

export const adminCreate: Command = {
  summary: 'Create an administrator account',
  usage: '[--name NAME] [--email EMAIL] [--password PASSWORD]',
  description: [
    'The only way to create an administrator. What is not given as an option is asked for',
    'on the terminal (the password without echo); prefer that to --password, which other',
    'users of the machine can see in the process list.',
  ],
  options: ACCOUNT_OPTIONS,
  positionals: [],
  async run(args, rt) {
    let name = text(args, 'name');
    let email = text(args, 'email');
    let password = typeof args.values.password === 'string' ? args.values.password : undefined;
    const missing = [name, email, password].some((value) => value === undefined);
    if (missing && !rt.interactive) {
      const flags = (['name', 'email', 'password'] as const).filter((f) => text(args, f) === undefined).map((f) => `--${f}`);
      throw usageError(`Missing ${flags.join(', ')} (stdin is not a terminal, so ${flags.length === 1 ? 'it' : 'they'} cannot be asked for).`, 'admin:create');
    }
    name ??= (await rt.ask('Name: ')).trim();
    email ??= (await rt.ask('Email: ')).trim();
    if (password === undefined) {
      password = await rt.ask('Password: ', true);
      const confirmation = await rt.ask('Confirm password: ', true);
      const errors = checkNewPassword(password, confirmation);
      if (Object.keys(errors).length > 0) throw new ValidationError(errors);
    }
    const user = await createAccount(rt, { name, email, password }, { verified: true, admin: true });
    rt.out(`Created administrator #${user.id} ${user.name} <${user.email}>.`);
  },
};

export const adminPromote: Command = {
  summary: 'Make an existing user an administrator',
  usage: 'EMAIL',
  description: ['Gives the user with this email access to the administration panel.'],
  options: [],
  positionals: ['EMAIL'],
  run: (args, rt) => setAdmin(rt, args, true),
};

export const adminDemote: Command = {
  summary: 'Take administrator rights away from a user',
  usage: 'EMAIL',
  description: ['The user keeps the account and its tokens, but loses the administration panel.'],
  options: [],
  positionals: ['EMAIL'],
  run: (args, rt) => setAdmin(rt, args, false),
};

export const userDelete: Command = {
  summary: 'Delete a user account',
  usage: 'EMAIL [--yes]',
  description: [
    'Deletes the account and every way into it (sessions, API tokens, remember-me devices,',
    'passkeys, provider links, a pending email change or password reset), as the security page',
    'and the panel do; the posts stay, without an author. Asks first on a terminal; --yes does',
    'not (and is required when stdin is not a terminal).',
  ],
  options: [{ name: 'yes', type: 'boolean', description: 'Delete without asking' }],
  positionals: ['EMAIL'],
  async run(args, rt) {
    const email = args.positionals[0] ?? '';
    if (email === '') throw usageError('Missing EMAIL.', 'user:delete');
    const services = rt.services();
    const user = await services.users.findByEmail(email);
    if (user === undefined) throw new CliError(`No user has the email ${email}.`);
    if (args.values.yes !== true) {
      if (!rt.interactive) throw usageError('Add --yes to delete without a terminal to ask on.', 'user:delete');
      const answer = (await rt.ask(`Delete ${user.name} <${user.email}> and everything that signs them in? [y/N] `)).trim().toLowerCase();
      if (answer !== 'y' && answer !== 'yes') {
        rt.out('Nothing deleted.');
        return;
      }
    }
    await services.accountDeletion.erase(user);
    await services.audit.record(commandLineActor(), 'user.deleted', { type: 'user', id: user.id, label: user.email });
    rt.out(`Deleted user #${user.id} ${user.name} <${user.email}>.`);
  },
};
