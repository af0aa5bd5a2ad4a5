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
import { t } from '../i18n/translator.js';
import { AppError } from '../shared/errors.js';
import { digestBytes, hashSecret, sameDigest, secretDigest } from '../tokens/token-string.js';
import { SecretBox } from './secret-box.js';

export const RECOVERY_CODE_COUNT = 8;
/** One step of clock skew either way (±30 seconds), as the issue asks. */
const TOLERANCE_SECONDS = 30;

/** What qrcode's SVG renderer writes: a background and module paths, nothing else. */
const QR_SVG_SHAPE = /^<svg xmlns="http:\/\/www\.w3\.org\/2000\/svg" viewBox="[0-9 ]+" shape-rendering="crispEdges">(<path (fill|stroke)="#[0-9a-f]{6}" d="[MmHhVvZz0-9. ]+"\/>)+<\/svg>\s*$/;

/** The secret in groups of four, easier to read and type into an app by hand. */
export function groupedSecret(secret: string): string {
  return secret.match(/.{1,4}/g)?.join(' ') ?? secret;
}

/** The text file of new recovery codes (CRLF, so that every editor shows the lines). */
export function recoveryCodesText(locale: string, appName: string, email: string, codes: readonly string[], now = new Date()): string {
  return [
    t(locale, 'two_factor.file.title', { app: appName }),
    t(locale, 'two_factor.file.account', { email }),
    t(locale, 'two_factor.file.made', { date: `${now.toISOString().slice(0, 16).replace('T', ' ')} UTC` }),
    '',
    t(locale, 'two_factor.file.use'),
    '',
    ...codes,
    '',
  ].join('\r\n');
}

/** A file name for the recovery codes: the application's name in safe characters. */
export function recoveryCodesFileName(appName: string): string {
  const base = appName.replace(/[^A-Za-z0-9._-]+/g, '-').replace(/^-+|-+$/g, '').toLowerCase();
  return `${base === '' ? 'account' : base}-recovery-codes.txt`;
}

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
  private readonly codesBox: SecretBox;

  constructor(
    private readonly db: Db,
    appKey: Buffer,
    private readonly issuer: string,
    private readonly clock: () => number = Date.now,
  ) {
    this.box = new SecretBox(appKey);
    this.codesBox = new SecretBox(appKey, 'two-factor-recovery-codes-in-session');
  }

  /**
   * Starts (or restarts) the set-up: a new secret, stored encrypted and not yet confirmed, so
   * two-factor is off until confirm() sees a code from it. Refused (409) when two-factor is
   * already on: a new set-up would silently replace a working secret; it is turned off first.
   */
  async begin(user: User): Promise<TwoFactorSetup> {
    const secret = generateSecret();
    const result = await this.db.kysely
      .updateTable('users')
      .set({ two_factor_secret: this.box.encrypt(secret), two_factor_confirmed_at: null, two_factor_recovery_codes: null, two_factor_last_step: null })
      .where('id', '=', user.id)
      .where('two_factor_confirmed_at', 'is', null)
      .executeTakeFirst();
    if (Number(result.numUpdatedRows) !== 1) throw new AppError(409, 'Two-factor sign-in is already on.');
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

  /**
   * Drops a set-up under way (a secret stored, never confirmed); a two-factor sign-in that is on
   * stays. Signing out everywhere calls it: the secret must not outlive the sessions that could
   * read it.
   */
  async discardPendingSetup(userId: number): Promise<void> {
    await this.db.kysely
      .updateTable('users')
      .set({ two_factor_secret: null, two_factor_recovery_codes: null, two_factor_last_step: null })
      .where('id', '=', userId)
      .where('two_factor_secret', 'is not', null)
      .where('two_factor_confirmed_at', 'is', null)
      .execute();
  }

  /** Turns two-factor sign-in off: secret and recovery codes are deleted. */
  async disable(userId: number): Promise<void> {
    await this.db.kysely
      .updateTable('users')
      .set({ two_factor_secret: null, two_factor_confirmed_at: null, two_factor_recovery_codes: null, two_factor_last_step: null })
      .where('id', '=', userId)
      .execute();
  }

  /** Replaces every recovery code; returns the new ones (shown once), or null when two-factor is off. */
  async regenerateRecoveryCodes(user: User): Promise<string[] | null> {
    const codes = Array.from({ length: RECOVERY_CODE_COUNT }, newRecoveryCode);
    const result = await this.db.kysely
      .updateTable('users')
      .set({ two_factor_recovery_codes: JSON.stringify(codes.map(hashSecret)) })
      .where('id', '=', user.id)
      .where('two_factor_confirmed_at', 'is not', null)
      .executeTakeFirst();
    return Number(result.numUpdatedRows) === 1 ? codes : null;
  }

  /**
   * New recovery codes sealed for the session, which carries them to the one page that shows
   * them: sessions live in the database, and a plaintext code must never be stored there.
   */
  sealRecoveryCodes(codes: readonly string[]): string {
    return this.codesBox.encrypt(JSON.stringify(codes));
  }

  /** The codes sealed by sealRecoveryCodes, or null for anything else. */
  openRecoveryCodes(sealed: unknown): string[] | null {
    if (typeof sealed !== 'string') return null;
    const json = this.codesBox.decrypt(sealed);
    if (json === null) return null;
    const codes: unknown = JSON.parse(json);
    return Array.isArray(codes) && codes.every((code) => typeof code === 'string') ? codes : null;
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
    // The pages put this SVG into the HTML unescaped: it must be qrcode's own markup (a frame and
    // paths of drawing commands), never text of the URI (the email is the user's input).
    if (!QR_SVG_SHAPE.test(qrSvg)) throw new Error('Unexpected QR code markup.');
    return { secret, uri, qrSvg };
  }
}
