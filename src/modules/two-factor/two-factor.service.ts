// Two-factor sign-in with TOTP (RFC 6238, 6 digits, 30-second steps), as Laravel Fortify does
// it: a secret shown once as a QR code and as text, switched on only after a first correct code,
// and 8 single-use recovery codes. The secret is stored encrypted (secret-box.ts), the recovery
// codes as SHA-256 (they are long random strings: a fast hash is enough, as for API tokens).
// Codes are checked by otplib; each code is accepted once: the last accepted time step is kept
// and only a later one passes (compare-and-set, so two racing requests cannot both use it).
import { randomBytes } from 'node:crypto';
import { generateSecret, generateURI, verify } from 'otplib';
import QRCode from 'qrcode';
import type { Db } from '../../db/connect.js';
import type { User } from '../../db/types.js';
import { digestBytes, hashSecret, sameDigest, secretDigest } from '../tokens/token-string.js';
import { SecretBox } from './secret-box.js';

export const RECOVERY_CODE_COUNT = 8;
/** One step of clock skew either way (±30 seconds), as the issue asks. */
const TOLERANCE_SECONDS = 30;

export type TwoFactorSetup = { secret: string; uri: string; qrSvg: string };
export type SignInProof = { code?: string; recoveryCode?: string };

/** A recovery code: two groups of 10 lower-case letters and digits (Fortify's shape). */
function newRecoveryCode(): string {
  const alphabet = 'abcdefghijkmnpqrstuvwxyz23456789';
  const bytes = randomBytes(20);
  const chars = [...bytes].map((byte) => alphabet[byte % alphabet.length]);
  return `${chars.slice(0, 10).join('')}-${chars.slice(10).join('')}`;
}

const normalizeCode = (code: string): string => code.replace(/\s+/g, '');
const normalizeRecovery = (code: string): string => code.trim().toLowerCase();

/** Whether two-factor sign-in is on for the user (a confirmed secret). */
export function twoFactorEnabled(user: Pick<User, 'two_factor_secret' | 'two_factor_confirmed_at'>): boolean {
  return user.two_factor_secret !== null && user.two_factor_confirmed_at !== null;
}

export class TwoFactorService {
  private readonly box: SecretBox;

  constructor(
    private readonly db: Db,
    appKey: Buffer,
    private readonly issuer: string,
    private readonly clock: () => number = Date.now,
  ) {
    this.box = new SecretBox(appKey);
  }

  /**
   * Starts (or restarts) the set-up: a new secret, stored encrypted and not yet confirmed, so
   * two-factor is off until confirm() sees a code from it.
   */
  async begin(user: User): Promise<TwoFactorSetup> {
    const secret = generateSecret();
    await this.db.kysely
      .updateTable('users')
      .set({ two_factor_secret: this.box.encrypt(secret), two_factor_confirmed_at: null, two_factor_recovery_codes: null, two_factor_last_step: null })
      .where('id', '=', user.id)
      .execute();
    return this.setupOf(user, secret);
  }

  /** The set-up under way (a secret not yet confirmed), or null. */
  async pendingSetup(user: User): Promise<TwoFactorSetup | null> {
    if (user.two_factor_secret === null || user.two_factor_confirmed_at !== null) return null;
    const secret = this.box.decrypt(user.two_factor_secret);
    return secret === null ? null : this.setupOf(user, secret);
  }

  /** Confirms the set-up with a first code; returns the recovery codes (shown once) or null for a wrong code. */
  async confirm(user: User, code: string): Promise<string[] | null> {
    if (user.two_factor_secret === null || user.two_factor_confirmed_at !== null) return null;
    const secret = this.box.decrypt(user.two_factor_secret);
    if (secret === null) return null;
    const step = await this.matchingStep(secret, code, null);
    if (step === null) return null;
    const codes = Array.from({ length: RECOVERY_CODE_COUNT }, newRecoveryCode);
    const result = await this.db.kysely
      .updateTable('users')
      .set({
        two_factor_confirmed_at: new Date(this.clock()).toISOString(),
        two_factor_last_step: step,
        two_factor_recovery_codes: JSON.stringify(codes.map(hashSecret)),
      })
      .where('id', '=', user.id)
      .where('two_factor_secret', '=', user.two_factor_secret)
      .where('two_factor_confirmed_at', 'is', null)
      .executeTakeFirst();
    return Number(result.numUpdatedRows) === 1 ? codes : null;
  }

  /** Turns two-factor sign-in off: secret and recovery codes are deleted. */
  async disable(userId: number): Promise<void> {
    await this.db.kysely
      .updateTable('users')
      .set({ two_factor_secret: null, two_factor_confirmed_at: null, two_factor_recovery_codes: null, two_factor_last_step: null })
      .where('id', '=', userId)
      .execute();
  }

  /** Replaces every recovery code; returns the new ones (shown once). */
  async regenerateRecoveryCodes(user: User): Promise<string[]> {
    const codes = Array.from({ length: RECOVERY_CODE_COUNT }, newRecoveryCode);
    await this.db.kysely.updateTable('users').set({ two_factor_recovery_codes: JSON.stringify(codes.map(hashSecret)) }).where('id', '=', user.id).execute();
    return codes;
  }

  /** How many recovery codes are left unused. */
  remainingRecoveryCodes(user: User): number {
    return user.two_factor_recovery_codes === null ? 0 : (JSON.parse(user.two_factor_recovery_codes) as string[]).length;
  }

  /**
   * The second factor of a sign-in: a current code (once: a code of a time step already used is
   * refused) or one of the recovery codes (used up by this). False for anything else.
   */
  async verifySignIn(user: User, proof: SignInProof): Promise<boolean> {
    if (!twoFactorEnabled(user)) return false;
    if (proof.code !== undefined && proof.code !== '') return this.useCode(user, proof.code);
    if (proof.recoveryCode !== undefined && proof.recoveryCode !== '') return this.useRecoveryCode(user, proof.recoveryCode);
    return false;
  }

  private async useCode(user: User, code: string): Promise<boolean> {
    const secret = this.box.decrypt(user.two_factor_secret!);
    if (secret === null) return false;
    const last = user.two_factor_last_step;
    const step = await this.matchingStep(secret, code, last);
    if (step === null) return false;
    // Compare-and-set on the last step: of two requests with the same code, one wins.
    const result = await this.db.kysely
      .updateTable('users')
      .set({ two_factor_last_step: step })
      .where('id', '=', user.id)
      .where((eb) => (last === null ? eb('two_factor_last_step', 'is', null) : eb('two_factor_last_step', '=', last)))
      .executeTakeFirst();
    return Number(result.numUpdatedRows) === 1;
  }

  private async useRecoveryCode(user: User, code: string): Promise<boolean> {
    const stored = user.two_factor_recovery_codes;
    if (stored === null) return false;
    const hashes = JSON.parse(stored) as string[];
    const given = secretDigest(normalizeRecovery(code));
    // Every stored code is compared (constant time each), so the time does not tell which matched.
    let index = -1;
    hashes.forEach((hash, i) => {
      if (sameDigest(digestBytes(hash), given) && index === -1) index = i;
    });
    if (index === -1) return false;
    const remaining = hashes.filter((_, i) => i !== index);
    const result = await this.db.kysely
      .updateTable('users')
      .set({ two_factor_recovery_codes: JSON.stringify(remaining) })
      .where('id', '=', user.id)
      .where('two_factor_recovery_codes', '=', stored)
      .executeTakeFirst();
    return Number(result.numUpdatedRows) === 1;
  }

  /** The time step of a valid code later than `after`, or null. */
  private async matchingStep(secret: string, code: string, after: number | null): Promise<number | null> {
    const token = normalizeCode(code);
    if (!/^\d{6}$/.test(token)) return null;
    const result = await verify({
      secret,
      token,
      epoch: Math.floor(this.clock() / 1000),
      epochTolerance: TOLERANCE_SECONDS,
      ...(after === null ? {} : { afterTimeStep: after }),
    });
    // The TOTP strategy's result carries the step it matched (otplib types HOTP's result too).
    return result.valid && 'timeStep' in result ? result.timeStep : null;
  }

  private async setupOf(user: User, secret: string): Promise<TwoFactorSetup> {
    const uri = generateURI({ issuer: this.issuer, label: user.email, secret });
    const qrSvg = await QRCode.toString(uri, { type: 'svg', errorCorrectionLevel: 'M', margin: 1 });
    return { secret, uri, qrSvg };
  }
}
