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
