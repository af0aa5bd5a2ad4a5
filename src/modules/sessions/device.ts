// The device a session was used from, as a person recognises it: the browser and the system
// named by its User-Agent (ua-parser-js), nothing more precise. An agent that names neither is
// an unknown device.
import { UAParser } from 'ua-parser-js';

export type Device = { browser: string | null; os: string | null };

// Parsing an agent runs a few hundred regular expressions (a sixth of the security page, which
// lists every session); a user's sessions come from a few browsers, so each agent is parsed once.
// At most this many are kept, so that agents sent by anyone cannot grow the memory.
const MAX_KEPT = 500;
const parsed = new Map<string, Device>();

/** The browser and operating system a User-Agent names (each null when it names none). */
export function deviceOf(userAgent: string | null): Device {
  if (userAgent === null || userAgent === '') return { browser: null, os: null };
  const known = parsed.get(userAgent);
  if (known !== undefined) return { ...known };
  const agent = UAParser(userAgent);
  const device = { browser: agent.browser.name ?? null, os: agent.os.name ?? null };
  if (parsed.size >= MAX_KEPT) parsed.clear();
  parsed.set(userAgent, device);
  return { ...device };
}
