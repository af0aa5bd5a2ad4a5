// Shared set-up for the page tests: logging a client in through the form, and reading the
// session rows the cookies point at.
import assert from 'node:assert/strict';
import { after, before } from 'node:test';
import type { Db } from '../../src/db/connect.js';
import { SESSION_COOKIE } from '../../src/plugins/session.js';
import { buildTestApp, createUser, twoInstances, type TestApp } from '../helpers.js';
import { decodeEntities, WebClient } from '../support/client.js';
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

/**
 * The form of the page that sends a held post again after a password confirmation
 * (/user/confirm-password/continue): where it posts, its fields other than the CSRF token, and
 * its Cancel link.
 */
export function continuation(html: string): { action: string; fields: Record<string, string>; cancel: string | null } {
  const form = /<form method="post" action="([^"]+)" data-confirm-continue>([\s\S]*?)<\/form>/.exec(html);
  assert.ok(form, 'the continuation form');
  const fields = Object.fromEntries(
    [...form[2]!.matchAll(/<input type="hidden" name="([^"]+)" value="([^"]*)">/g)].filter((m) => m[1] !== '_token').map((m) => [m[1]!, decodeEntities(m[2]!)]),
  );
  const cancel = /<a href="([^"]*)">[^<]*<\/a>/.exec(form[2]!)?.[1];
  return { action: decodeEntities(form[1]!), fields, cancel: cancel === undefined ? null : decodeEntities(cancel) };
}

/** Confirms the password after a detour and sends the held post as the continuation page does (its fresh CSRF token). */
export async function confirmAndContinue(client: WebClient, password: string) {
  await client.get('/user/confirm-password');
  const confirmed = await client.post('/user/confirm-password', { password });
  assert.equal(confirmed.headers.location, '/user/confirm-password/continue', 'the held post goes on');
  const form = continuation((await client.follow(confirmed)).body);
  return client.post(form.action, form.fields);
}

/**
 * Two instances of the app on one database, a user made through the first (`a`) and signed in
 * on the second (`there`, a client of `b`), for the tests of what a page keeps in memory;
 * `page(path)` asks for a page there twice and returns the second answer's body, which comes from
 * memory when nothing changed in between.
 */
export async function signedInOnSecondInstance(email: string) {
  const { a, b, close } = await twoInstances();
  const user = await createUser(a, { email });
  const there = new WebClient(b);
  await login(there, user.email, user.plainPassword);
  const page = async (path: string): Promise<string> => {
    assert.equal((await there.get(path)).statusCode, 200);
    const second = await there.get(path);
    assert.equal(second.statusCode, 200);
    return second.body;
  };
  return { a, b, close, user, there, page };
}

/**
 * signedInOnSecondInstance for the tests of one describe block, made in its before() and closed
 * in its after(): each test takes `a`, `user` and `page()` (which asks for `path` there) from it.
 */
export function secondInstanceShowing(path: string, email: string) {
  const kept = {} as Pick<Awaited<ReturnType<typeof signedInOnSecondInstance>>, 'a' | 'user'> & { page: () => Promise<string> };
  let close = async () => {};
  before(async () => {
    const setup = await signedInOnSecondInstance(email);
    Object.assign(kept, { a: setup.a, user: setup.user, page: () => setup.page(path) });
    close = setup.close;
  });
  after(() => close());
  return kept;
}
