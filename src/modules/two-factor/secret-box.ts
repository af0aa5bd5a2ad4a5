// Encryption of the TOTP secrets at rest: AES-256-GCM under a key derived from APP_KEY, so a
// database dump alone does not give anyone the codes. A changed APP_KEY makes old secrets
// unreadable (decrypt returns null), as Laravel's encrypted columns do.
import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';
import { deriveKey } from '../shared/keys.js';

const VERSION = 'v1';

export class SecretBox {
  private readonly key: Buffer;

  /** `purpose` picks the derived key, so a value sealed for one use cannot be opened as another. */
  constructor(appKey: Buffer, purpose = 'two-factor-secrets') {
    this.key = deriveKey(appKey, purpose);
  }

  /** `v1.<iv>.<tag>.<ciphertext>`, base64url parts; a new random IV each time. */
  encrypt(plaintext: string): string {
    const iv = randomBytes(12);
    const cipher = createCipheriv('aes-256-gcm', this.key, iv);
    const sealed = Buffer.concat([cipher.update(plaintext, 'utf8'), cipher.final()]);
    return [VERSION, iv.toString('base64url'), cipher.getAuthTag().toString('base64url'), sealed.toString('base64url')].join('.');
  }

  /** The plaintext, or null when the value was not sealed with this key (or was altered). */
  decrypt(sealed: string): string | null {
    const [version, iv, tag, data, extra] = sealed.split('.');
    if (version !== VERSION || iv === undefined || tag === undefined || data === undefined || extra !== undefined) return null;
    try {
      const decipher = createDecipheriv('aes-256-gcm', this.key, Buffer.from(iv, 'base64url'));
      decipher.setAuthTag(Buffer.from(tag, 'base64url'));
      return Buffer.concat([decipher.update(Buffer.from(data, 'base64url')), decipher.final()]).toString('utf8');
    } catch {
      return null;
    }
  }
}
