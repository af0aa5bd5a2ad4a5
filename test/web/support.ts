// Shared set-up for the page tests: logging a client in through the form, and reading the
// session rows the cookies point at.
import assert from 'node:assert/strict';
import type { Db } from '../../src/db/connect.js';
import { SESSION_COOKIE } from '../../src/plugins/session.js';
import { buildTestApp, type TestApp } from '../helpers.js';
import type { WebClient } from '../support/client.js';
import { startMailServer, type MailServer } from './mail-server.js';

/** A test app whose smtp mailer delivers to a real SMTP server on loopback. */
export async function appWithMail(env: Record<string, string> = {}): Promise<{ t: TestApp; mail: MailServer }> {
  const mail = await startMailServer();
  return { t: await buildTestApp({ ...mail.env, ...env }), mail };
}

export async function closeAppWithMail(t: TestApp | undefined, mail: MailServer | undefined): Promise<void> {
  await t?.close();
  await mail?.close();
}

/** The session id inside a signed session cookie value (`<id>.<signature>`). */
export function sessionIdOf(client: WebClient): string | null {
  const value = client.cookies.get(SESSION_COOKIE);
  if (value === undefined) return null;
  const decoded = decodeURIComponent(value);
  return decoded.slice(0, decoded.lastIndexOf('.'));
}

export async function sessionRow(db: Db, id: string | null) {
  if (id === null) return undefined;
  return db.kysely.selectFrom('sessions').selectAll().where('id', '=', id).executeTakeFirst();
}

/** Logs the client in through GET + POST /login; asserts the 303. */
export async function login(client: WebClient, email: string, password: string, extra: Record<string, string> = {}): Promise<void> {
  await client.get('/login');
  const response = await client.post('/login', { email, password, ...extra });
  assert.equal(response.statusCode, 303, response.body);
}

/** True when the client's cookies open /dashboard. */
export async function isLoggedIn(client: WebClient): Promise<boolean> {
  const response = await client.get('/dashboard');
  return response.statusCode === 200;
}

/** The <main> of a page, for messages that must (or must not) appear. */
export function mainOf(html: string): string {
  const start = html.indexOf('<main');
  return start === -1 ? html : html.slice(start, html.indexOf('</main>'));
}
