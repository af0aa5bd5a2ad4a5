// Passkeys (WebAuthn) with @simplewebauthn/server: registering one for a signed-in user,
// listing and removing them, and signing in with one. The ceremonies' challenges are kept by
// the caller (the session) as a PendingChallenge: one at a time, five minutes, used once.
import {
  generateAuthenticationOptions,
  generateRegistrationOptions,
  verifyAuthenticationResponse,
  verifyRegistrationResponse,
  type AuthenticationResponseJSON,
  type PublicKeyCredentialCreationOptionsJSON,
  type PublicKeyCredentialRequestOptionsJSON,
  type RegistrationResponseJSON,
} from '@simplewebauthn/server';
import type { Config } from '../../config.js';
import type { Db } from '../../db/connect.js';
import type { User } from '../../db/types.js';
import type { MaybePromise } from '../../lib/maybe-promise.js';
import { removePasskeyKeepingAWayIn } from '../identities/identities.service.js';
import { invalid } from '../shared/errors.js';
import { countPasskeys, deletePasskey, insertPasskey, passkeyByCredentialId, passkeysOf, advancePasskeyCounter, type PasskeyRow } from './passkeys.repository.js';

/** How long the browser (and the user) may take over a ceremony. */
export const CHALLENGE_LIFETIME_MS = 5 * 60 * 1000;

/** A challenge waiting for its answer; `purpose` keeps one ceremony's challenge out of another. */
export type PendingChallenge = { challenge: string; expiresAt: number; purpose: string; userId?: number; name?: string };

/** A passkey as its owner sees it on the security page. */
export type PasskeyView = { id: number; name: string; created_at: string; last_used_at: string | null; backed_up: boolean };

/** The pending challenge when it is for `purpose` and still fresh, else null (the caller has already dropped it: used once). */
export function freshChallenge(pending: PendingChallenge | undefined, purpose: string, now = Date.now()): PendingChallenge | null {
  if (pending === undefined || typeof pending.challenge !== 'string' || pending.purpose !== purpose) return null;
  return pending.expiresAt > now ? pending : null;
}

function present(row: PasskeyRow): PasskeyView {
  return { id: row.id, name: row.name, created_at: String(row.created_at), last_used_at: row.last_used_at === null ? null : String(row.last_used_at), backed_up: Number(row.backed_up) === 1 };
}

function transportsOf(row: PasskeyRow): string[] {
  try {
    const parsed: unknown = JSON.parse(row.transports);
    return Array.isArray(parsed) ? parsed.filter((item): item is string => typeof item === 'string') : [];
  } catch {
    return [];
  }
}

// The user handle an authenticator keeps with a discoverable passkey: the account's id, which
// says nothing about the person (no email, no name).
function userHandle(userId: number): Uint8Array<ArrayBuffer> {
  return new TextEncoder().encode(String(userId));
}

const refused = () => invalid({ passkey: [{ key: 'passkeys.failed' }] });

export class PasskeyService {
  private readonly rpId: string;
  private readonly origin: string;

  constructor(
    private readonly db: Db,
    private readonly config: Pick<Config, 'appUrl' | 'appName' | 'oidcProviders'>,
    private readonly clock: () => number = Date.now,
    /** Where the security page's list of a user's passkeys is read from (services.ts hands a kept one). */
    private readonly passkeysOfUser: (userId: number) => MaybePromise<readonly PasskeyRow[]> = (userId) => passkeysOf(db, userId),
  ) {
    // The relying party is APP_URL's host: a passkey made here works on no other site.
    const url = new URL(config.appUrl);
    this.rpId = url.hostname;
    this.origin = url.origin;
  }

  /** The user's passkeys, newest first. */
  async list(userId: number): Promise<PasskeyView[]> {
    return (await this.passkeysOfUser(userId)).map(present);
  }

  /** How many passkeys the user has. */
  count(userId: number): Promise<number> {
    return countPasskeys(this.db, userId);
  }

  /**
   * Removes one of the user's passkeys; false when the user has none with this id; LastWayInError
   * when it is the only way left into the account (no password, no provider, no other passkey).
   */
  remove(userId: number, id: number): Promise<boolean> {
    const providers = this.config.oidcProviders.map((provider) => provider.name);
    return removePasskeyKeepingAWayIn(this.db, userId, providers, (trx) => deletePasskey(trx, userId, id));
  }

  /**
   * What navigator.credentials.create() needs, and the challenge to keep. The passkey must be
   * discoverable (resident), so that signing in needs no email; the user's existing passkeys
   * are excluded, so one authenticator is not registered twice.
   */
  async registrationOptions(user: Pick<User, 'id' | 'email' | 'name'>, name: string): Promise<{ options: PublicKeyCredentialCreationOptionsJSON; pending: PendingChallenge }> {
    const existing = await passkeysOf(this.db, user.id);
    const options = await generateRegistrationOptions({
      rpName: this.config.appName,
      rpID: this.rpId,
      userName: user.email,
      userDisplayName: user.name,
      userID: userHandle(user.id),
      attestationType: 'none',
      excludeCredentials: existing.map((row) => ({ id: row.credential_id, transports: transportsOf(row) })),
      authenticatorSelection: { residentKey: 'required', userVerification: 'preferred' },
    });
    return { options, pending: { challenge: options.challenge, expiresAt: this.clock() + CHALLENGE_LIFETIME_MS, purpose: 'register', userId: user.id, name } };
  }

  /** Verifies the browser's answer to a registration challenge and stores the passkey; 422 when it is not a valid one. */
  async register(userId: number, pending: PendingChallenge | null, response: unknown): Promise<PasskeyView> {
    if (pending === null || pending.userId !== userId || pending.name === undefined) throw refused();
    let verification;
    try {
      verification = await verifyRegistrationResponse({
        response: response as RegistrationResponseJSON,
        expectedChallenge: pending.challenge,
        expectedOrigin: this.origin,
        expectedRPID: this.rpId,
        requireUserVerification: false,
      });
    } catch {
      // A malformed or forged answer throws inside the library: to the user, it is simply refused.
      throw refused();
    }
    if (!verification.verified) throw refused();
    const { credential, credentialBackedUp } = verification.registrationInfo;
    if ((await passkeyByCredentialId(this.db, credential.id)) !== undefined) throw refused();
    const row = await insertPasskey(
      this.db,
      {
        userId,
        name: pending.name,
        credentialId: credential.id,
        publicKey: Buffer.from(credential.publicKey).toString('base64url'),
        counter: credential.counter,
        transports: credential.transports ?? [],
        backedUp: credentialBackedUp,
      },
      new Date(this.clock()),
    );
    return present(row);
  }

  /**
   * What navigator.credentials.get() needs, and the challenge to keep. Without `userId`, no
   * credential is listed: the authenticator offers its discoverable passkeys for this site, so
   * the visitor types nothing and the page learns nothing of which accounts exist. With it
   * (confirming a signed-in user), that user's passkeys are listed.
   */
  async authenticationOptions(purpose: string, userId?: number): Promise<{ options: PublicKeyCredentialRequestOptionsJSON; pending: PendingChallenge }> {
    const allow = userId === undefined ? undefined : (await passkeysOf(this.db, userId)).map((row) => ({ id: row.credential_id, transports: transportsOf(row) }));
    const options = await generateAuthenticationOptions({ rpID: this.rpId, userVerification: 'required', ...(allow === undefined ? {} : { allowCredentials: allow }) });
    return { options, pending: { challenge: options.challenge, expiresAt: this.clock() + CHALLENGE_LIFETIME_MS, purpose, ...(userId === undefined ? {} : { userId }) } };
  }

  /**
   * The id of the user whose passkey signed the challenge, or null: unknown credential, bad
   * signature, wrong origin, stale or missing challenge, no user verification, a signature
   * counter that another sign-in has already reached. The counter and last use are recorded.
   */
  async authenticate(pending: PendingChallenge | null, response: unknown): Promise<number | null> {
    if (pending === null || typeof response !== 'object' || response === null) return null;
    const credentialId = (response as { id?: unknown }).id;
    if (typeof credentialId !== 'string' || credentialId.length === 0 || credentialId.length > 1024) return null;
    const passkey = await passkeyByCredentialId(this.db, credentialId);
    if (passkey === undefined) return null;
    if (pending.userId !== undefined && pending.userId !== passkey.user_id) return null;
    const handle = (response as AuthenticationResponseJSON).response?.userHandle;
    // A discoverable passkey names its account: it must be the one the credential belongs to.
    if (typeof handle === 'string' && handle !== Buffer.from(userHandle(passkey.user_id)).toString('base64url')) return null;
    let verification;
    try {
      verification = await verifyAuthenticationResponse({
        response: response as AuthenticationResponseJSON,
        expectedChallenge: pending.challenge,
        expectedOrigin: this.origin,
        expectedRPID: this.rpId,
        credential: { id: passkey.credential_id, publicKey: new Uint8Array(Buffer.from(passkey.public_key, 'base64url')), counter: Number(passkey.counter), transports: transportsOf(passkey) },
        // A passkey sign-in stands for two factors (the device, and the PIN or biometric that
        // unlocked it), so the authenticator must say it verified the user.
        requireUserVerification: true,
      });
    } catch {
      return null;
    }
    if (!verification.verified) return null;
    // The library compared the counter with the one read above; another sign-in may have moved
    // it since. Only the answer that moves the stored counter forward signs in.
    const { newCounter, credentialBackedUp } = verification.authenticationInfo;
    if (!(await advancePasskeyCounter(this.db, passkey.id, newCounter, credentialBackedUp, new Date(this.clock())))) return null;
    return passkey.user_id;
  }
}
