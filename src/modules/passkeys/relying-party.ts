// Whether browsers will make and use passkeys for APP_URL, and if not, why. WebAuthn runs only
// in a secure context (https, or http on localhost) and takes the page's host as the relying
// party's id, which must be a domain name: on an IP address (the old default APP_URL,
// http://127.0.0.1:3000) Chromium refuses the ceremony, and the page used to blame the passkey.
import { isIP } from 'node:net';

/** Why passkeys cannot work at APP_URL: its host is an IP address, or it is not a secure context. */
export type PasskeysUnavailable = 'ip_address' | 'insecure';

const isLocalhost = (hostname: string) => hostname === 'localhost' || hostname.endsWith('.localhost');

/** Null when browsers accept passkeys at `appUrl`, else the reason they refuse them. */
export function passkeysUnavailable(appUrl: string): PasskeysUnavailable | null {
  const url = new URL(appUrl);
  const hostname = url.hostname.replace(/^\[|\]$/g, '');
  if (isIP(hostname) !== 0) return 'ip_address';
  if (url.protocol !== 'https:' && !isLocalhost(hostname)) return 'insecure';
  return null;
}

/** What APP_URL could be instead, for the explanation: the same port on localhost, or https. */
export function passkeysSuggestedUrl(appUrl: string, reason: PasskeysUnavailable): string {
  const url = new URL(appUrl);
  if (reason === 'ip_address') return `${url.protocol}//localhost${url.port === '' ? '' : `:${url.port}`}`;
  return `https://${url.host}`;
}
