// Set-up shared by the two-factor sign-in tests: two-factor turned on for a user through the
// service (as the set-up pages do), and codes of any time step computed from the secret.
import { generate } from 'otplib';
import type { FastifyInstance } from 'fastify';
import type { User } from '../../src/db/types.js';

export type TwoFactorUser = { secret: string; recoveryCodes: string[] };

/** The user's row as stored now. */
export async function reload(app: FastifyInstance, id: number): Promise<User> {
  const user = await app.services.users.findById(id);
  if (user === undefined) throw new Error(`user ${id} is gone`);
  return user;
}

/** The TOTP code of the step `steps` away from now (0: the current one). */
export function codeAt(secret: string, steps = 0): Promise<string> {
  return generate({ secret, epoch: Math.floor(Date.now() / 1000) + steps * 30 });
}

/**
 * Turns two-factor sign-in on for the user. Confirmed with the code of the previous step, so the
 * current step's code is still unused (a code is accepted once).
 */
export async function enableTwoFactor(app: FastifyInstance, id: number): Promise<TwoFactorUser> {
  const setup = await app.services.twoFactor.begin(await reload(app, id));
  const recoveryCodes = await app.services.twoFactor.confirm(await reload(app, id), await codeAt(setup.secret, -1));
  if (recoveryCodes === null) throw new Error('two-factor confirmation failed');
  return { secret: setup.secret, recoveryCodes };
}
