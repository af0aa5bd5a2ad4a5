// A software WebAuthn authenticator for the tests: P-256 keys from node:crypto, "none"
// attestation, so each answer the service checks is a real WebAuthn signature, and a forged one
// is really forged. Its signature counter counts up from `counter`, or stays 0 (`counting`
// false) as many platform authenticators report it.
import { createHash, generateKeyPairSync, randomBytes, sign, type KeyObject } from 'node:crypto';

export const ORIGIN = 'http://localhost:3000';

// The few CBOR shapes WebAuthn needs: unsigned and negative integers, bytes, text, arrays, maps.
function cborHead(major: number, length: number): Buffer {
  if (length < 24) return Buffer.from([(major << 5) | length]);
  if (length < 256) return Buffer.from([(major << 5) | 24, length]);
  const head = Buffer.alloc(3);
  head[0] = (major << 5) | 25;
  head.writeUInt16BE(length, 1);
  return head;
}
type Cbor = number | string | Buffer | Cbor[] | Map<Cbor, Cbor>;
function cbor(value: Cbor): Buffer {
  if (typeof value === 'number') return value >= 0 ? cborHead(0, value) : cborHead(1, -1 - value);
  if (typeof value === 'string') return Buffer.concat([cborHead(3, Buffer.byteLength(value)), Buffer.from(value)]);
  if (Buffer.isBuffer(value)) return Buffer.concat([cborHead(2, value.length), value]);
  if (Array.isArray(value)) return Buffer.concat([cborHead(4, value.length), ...value.map(cbor)]);
  return Buffer.concat([cborHead(5, value.size), ...[...value].flatMap(([k, v]) => [cbor(k), cbor(v)])]);
}

export const b64url = (bytes: Buffer | string) => Buffer.from(bytes).toString('base64url');
const sha256 = (data: Buffer | string) => createHash('sha256').update(data).digest();

/** One discoverable credential on a software authenticator: user verified, counter counting up. */
export class SoftPasskey {
  readonly id = randomBytes(16);
  private readonly keys = generateKeyPairSync('ec', { namedCurve: 'P-256' });
  /** The signature counter of the last answer; the next get() signs counter + 1. */
  counter = 0;
  /** False for an authenticator without a counter: every answer says 0. */
  counting = true;
  userHandle: string | null = null;

  constructor(private readonly origin = ORIGIN) {}

  private get rpIdHash(): Buffer {
    return sha256(new URL(this.origin).hostname);
  }

  /** The answer to registration options (navigator.credentials.create()). */
  create(options: { challenge: string; user: { id: string } }): Record<string, unknown> {
    this.userHandle = options.user.id;
    const jwk = this.keys.publicKey.export({ format: 'jwk' });
    const cose = cbor(new Map<Cbor, Cbor>([[1, 2], [3, -7], [-1, 1], [-2, Buffer.from(jwk.x!, 'base64url')], [-3, Buffer.from(jwk.y!, 'base64url')]]));
    const idLength = Buffer.alloc(2);
    idLength.writeUInt16BE(this.id.length);
    // Flags: user present, user verified, attested credential data.
    const authData = Buffer.concat([this.rpIdHash, Buffer.from([0x45]), Buffer.alloc(4), Buffer.alloc(16), idLength, this.id, cose]);
    const clientData = JSON.stringify({ type: 'webauthn.create', challenge: options.challenge, origin: this.origin, crossOrigin: false });
    return {
      id: b64url(this.id),
      rawId: b64url(this.id),
      type: 'public-key',
      clientExtensionResults: {},
      response: { clientDataJSON: b64url(clientData), attestationObject: b64url(cbor(new Map<Cbor, Cbor>([['fmt', 'none'], ['attStmt', new Map()], ['authData', authData]]))), transports: ['internal'] },
    };
  }

  /** The answer to authentication options (navigator.credentials.get()); `key` signs (another key forges). */
  get(options: { challenge: string }, key: KeyObject = this.keys.privateKey, flags = 0x05): Record<string, unknown> {
    if (this.counting) this.counter += 1;
    const count = Buffer.alloc(4);
    count.writeUInt32BE(this.counter);
    const authData = Buffer.concat([this.rpIdHash, Buffer.from([flags]), count]);
    const clientData = JSON.stringify({ type: 'webauthn.get', challenge: options.challenge, origin: this.origin, crossOrigin: false });
    const signature = sign('sha256', Buffer.concat([authData, sha256(clientData)]), key);
    return {
      id: b64url(this.id),
      rawId: b64url(this.id),
      type: 'public-key',
      clientExtensionResults: {},
      response: { clientDataJSON: b64url(clientData), authenticatorData: b64url(authData), signature: b64url(signature), ...(this.userHandle === null ? {} : { userHandle: this.userHandle }) },
    };
  }
}
