// What identifies a device, and how a device reads in a mail. No framework here.
//
// A browser is its device cookie: a long-lived random value set at its first sign-in, so a new
// IP (a phone moving between networks) is not a new device, and a cleared cookie or another
// browser is. An API client has no cookie: its user agent and the device_name it gives when it
// asks for a token are what it is known by. Only the SHA-256 of either is stored.
import { UAParser } from 'ua-parser-js';
import { hashSecret, randomAlphanumeric } from '../tokens/token-string.js';

const DEVICE_ID_LENGTH = 40;

/** A new random device id for a browser's cookie. */
export function newDeviceId(): string {
  return randomAlphanumeric(DEVICE_ID_LENGTH);
}

/** Whether a cookie's value is one of ours (anything else is replaced by a new id). */
export function isDeviceId(value: string | undefined): value is string {
  return value !== undefined && /^[A-Za-z0-9]{40}$/.test(value);
}

/** The stored fingerprint of a browser, from its device cookie. */
export function browserFingerprint(deviceId: string): string {
  return hashSecret(`browser\n${deviceId}`);
}

/** The stored fingerprint of an API client: its user agent and the token's device name. */
export function apiFingerprint(userAgent: string, deviceName: string): string {
  return hashSecret(`api\n${userAgent}\n${deviceName}`);
}

/** "Firefox 133 on Ubuntu", "Safari on iOS 18", or null when the user agent says nothing known. */
export function describeUserAgent(userAgent: string): string | null {
  const result = UAParser(userAgent);
  const browser = [result.browser.name, result.browser.major].filter(Boolean).join(' ');
  const os = [result.os.name, result.os.version].filter(Boolean).join(' ');
  if (browser !== '' && os !== '') return `${browser} / ${os}`;
  if (browser !== '') return browser;
  if (os !== '') return os;
  return null;
}

/** The most characters a text from a client (a device name, a user agent) takes in a mail. */
export const MAIL_TEXT_MAX = 60;

/**
 * Text a client chose (a token's device_name: any 255 characters), as a mail may quote it: data,
 * never a paragraph of the mail. One line (control, format and line-separator characters and
 * runs of spaces become one space, so no "SECURITY TEAM: …" line of its own and no right-to-left
 * override), no double quote of its own (it could close the quotation around it), at most
 * MAIL_TEXT_MAX characters with "…" when cut, and defanged the way threat reports write
 * addresses, so that no mail client turns it into a link: "://" → "[:]//" and a dot before a
 * letter → "[.]" ("evil[.]example"; version numbers such as "133.0" keep theirs).
 */
export function mailSafeText(text: string, max = MAIL_TEXT_MAX): string {
  const line = text
    .replace(/[\s\p{Cc}\p{Cf}\p{Zl}\p{Zp}]+/gu, ' ')
    .replace(/["“”„‟«»＂]/g, "'")
    .trim();
  const chars = [...line];
  const cut = chars.length <= max ? line : `${chars.slice(0, max - 1).join('').trimEnd()}…`;
  return cut.replace(/:\/\//g, '[:]//').replace(/[.。．｡](?=\p{L})/gu, '[.]');
}
