// The mails the log mailer wrote, read back for the development mailbox (/_dev/mail). Each mail
// is a pair of files in the mail directory: `<id>.eml`, the message as it would have left, and
// `<id>.json`, the same mail already decoded (mailer.ts writes both). The page reads the JSON:
// the .eml's parts are quoted-printable or base64, and the service has no MIME parser to decode
// them with (nodemailer composes, it does not parse).
import { readFile, readdir, rm } from 'node:fs/promises';
import { join } from 'node:path';

export type StoredMail = { id: string; to: string; subject: string; date: string; text: string; html: string; links: string[] };

export type MailSummary = Pick<StoredMail, 'id' | 'to' | 'subject' | 'date'>;

/** The name the log mailer gives a mail: its time (sortable) and six random hex digits. */
const MAIL_ID = /^\d{4}-\d{2}-\d{2}T\d{2}-\d{2}-\d{2}-\d{3}Z-[0-9a-f]{6}$/;

/** How many mails the list shows: the newest (the directory keeps MAIL_LOG_KEEP, 200 by default). */
export const MAILBOX_LIMIT = 100;

/** A new mail's id from its time and random suffix. */
export function mailId(at: Date, suffix: string): string {
  return `${at.toISOString().replace(/[:.]/g, '-')}-${suffix}`;
}

/**
 * Whether `id` is one the log mailer writes. Only such an id is ever joined to the directory:
 * one from a URL can then name no other file, nor climb out with `..` or a separator.
 */
export function isMailId(id: string): boolean {
  return MAIL_ID.test(id);
}

function parse(id: string, json: string): StoredMail | null {
  try {
    const value = JSON.parse(json) as Record<string, unknown>;
    const strings = ['to', 'subject', 'date', 'text', 'html'].every((key) => typeof value[key] === 'string');
    const links = Array.isArray(value.links) && value.links.every((link) => typeof link === 'string');
    return strings && links ? { id, ...(value as Omit<StoredMail, 'id'>) } : null;
  } catch {
    return null;
  }
}

/** One mail, or null when `id` is not a mail id or names no readable mail. */
export async function readMail(directory: string, id: string): Promise<StoredMail | null> {
  if (!isMailId(id)) return null;
  try {
    return parse(id, await readFile(join(directory, `${id}.json`), 'utf8'));
  } catch {
    return null;
  }
}

/** The newest mails first (at most MAILBOX_LIMIT); none when the directory does not exist yet. */
export async function listMails(directory: string): Promise<MailSummary[]> {
  let names: string[];
  try {
    names = await readdir(directory);
  } catch {
    return [];
  }
  // The ids start with their time, so their order is the mails' order.
  const ids = names
    .filter((name) => name.endsWith('.json'))
    .map((name) => name.slice(0, -'.json'.length))
    .filter(isMailId)
    .sort()
    .reverse()
    .slice(0, MAILBOX_LIMIT);
  const mails = await Promise.all(ids.map((id) => readMail(directory, id)));
  return mails.filter((mail): mail is StoredMail => mail !== null).map(({ id, to, subject, date }) => ({ id, to, subject, date }));
}

/**
 * Deletes all but the newest `keep` mails (both files of each), so that the log mailer's
 * directory stops growing; returns how many were deleted. A mail another process removes at the
 * same time is no error, and files that are not mails are left alone.
 */
export async function pruneMails(directory: string, keep: number): Promise<number> {
  let names: string[];
  try {
    names = await readdir(directory);
  } catch {
    return 0;
  }
  // An .eml whose .json was never written (a crash between the two) counts as a mail too.
  const ids = [...new Set(names.filter((name) => /\.(eml|json)$/.test(name)).map((name) => name.replace(/\.(eml|json)$/, '')))].filter(isMailId).sort();
  const old = ids.slice(0, Math.max(0, ids.length - keep));
  await Promise.all(old.flatMap((id) => ['eml', 'json'].map((ext) => rm(join(directory, `${id}.${ext}`), { force: true }))));
  return old.length;
}
