// The device a session was used from, as a person recognises it: the browser and the system
// named by its User-Agent (ua-parser-js), nothing more precise. An agent that names neither is
// an unknown device.
import { UAParser } from 'ua-parser-js';

export type Device = { browser: string | null; os: string | null };

/** The browser and operating system a User-Agent names (each null when it names none). */
export function deviceOf(userAgent: string | null): Device {
  if (userAgent === null || userAgent === '') return { browser: null, os: null };
  const parsed = UAParser(userAgent);
  return { browser: parsed.browser.name ?? null, os: parsed.os.name ?? null };
}
