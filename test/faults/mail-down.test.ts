// The mail server unreachable during registration (with email verification on) and password
// reset: the visitor gets the normal answer, the account or reset token is written, and the
// failure is logged (recipient and subject, never the link). Three ways for SMTP to fail:
// nothing listening, a server that accepts and hangs up, and one that accepts and never speaks
// (the answer must not wait for it).
import assert from 'node:assert/strict';
import { createServer, type Server, type Socket } from 'node:net';
import { after, describe, it } from 'node:test';
import { buildApp } from '../../src/app.js';
import { createTestDatabase, createUser, testConfig, type TestApp } from '../helpers.js';
import { freePort } from '../support/browser.js';
import { WebClient, statusMessage } from '../support/client.js';

const SENT = 'If an account exists for that email address, we have emailed a password reset link to it.';

type BrokenSmtp = { port: number; silent: boolean; sockets: Set<Socket>; close(): Promise<void> };

/** A TCP server that accepts SMTP connections and either hangs up at once or never answers. */
async function brokenSmtp(kind: 'hangs-up' | 'silent'): Promise<BrokenSmtp> {
  const sockets = new Set<Socket>();
  const server: Server = createServer((socket) => {
    socket.on('error', () => undefined);
    if (kind === 'hangs-up') return void socket.destroy();
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  const port = typeof address === 'object' && address !== null ? address.port : 0;
  return {
    port,
    silent: kind === 'silent',
    sockets,
    close: async () => {
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

type Failure = 'refused' | 'hangs-up' | 'silent';
const HOW: Record<Failure, string> = { refused: 'refuses connections', 'hangs-up': 'hangs up', silent: 'never answers' };

async function appWithBrokenMail(failure: Failure): Promise<{ t: TestApp; lines: string[]; smtp: BrokenSmtp | null }> {
  const smtp = failure === 'refused' ? null : await brokenSmtp(failure);
  // A port that was free a moment ago: nothing listens, the connection is refused.
  const port = smtp?.port ?? (await freePort());
  const database = await createTestDatabase();
  const lines: string[] = [];
  const config = testConfig({ MAIL_MAILER: 'smtp', MAIL_HOST: '127.0.0.1', MAIL_PORT: String(port), MUST_VERIFY_EMAIL: 'true', LOG_LEVEL: 'info' });
  const app = await buildApp(config, { db: database.db, loggerStream: { write: (line) => void lines.push(line) } });
  await app.ready();
  return { t: { app, db: database.db, config, close: async () => (await app.close(), await database.drop()) }, lines, smtp };
}

/** Waits until the mailer has connected to the silent server, then cuts it off so delivery fails now. */
async function hangUpWhenConnected(smtp: BrokenSmtp): Promise<void> {
  // A count, not a time: a delivery that never starts (its query failed) fails the test instead of hanging the run.
  for (let tries = 1; smtp.sockets.size === 0; tries += 1) {
    assert.ok(tries < 1000, 'the mailer never connected to the mail server');
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  for (const socket of smtp.sockets) socket.destroy();
}

const failures = (lines: string[]) =>
  lines.map((line) => JSON.parse(line) as Record<string, unknown>).filter((entry) => entry.msg === 'mail delivery failed');

/**
 * After the visitor's answer: the delivery fails (at once, or when the silent server is cut
 * off, having said nothing until then) and is logged with recipient and subject, never the link.
 */
async function assertFailureLogged(t: TestApp, lines: string[], smtp: BrokenSmtp | null, mail: { to: string; subject: string; link: string }): Promise<void> {
  if (smtp?.silent === true) {
    // The visitor has the answer while the mail server still has not said a word.
    assert.deepEqual(failures(lines), []);
    await hangUpWhenConnected(smtp);
  }
  await t.app.services.mail.settled();
  const [logged] = failures(lines);
  assert.ok(logged, 'the failure is logged');
  assert.equal(logged.to, mail.to);
  assert.equal(logged.subject, mail.subject);
  assert.ok(!lines.join('\n').includes(mail.link), 'no link in the log');
}

describe('mail server unreachable', () => {
  const opened: { t: TestApp; smtp: BrokenSmtp | null }[] = [];
  const figures: string[] = [];
  after(async () => {
    for (const { t, smtp } of opened) {
      await smtp?.close();
      await t.close();
    }
    console.log(`FIGURES mail-down: ${figures.join(' ')}`);
  });

  for (const failure of ['refused', 'hangs-up', 'silent'] as const) {
    it(`registers and answers as usual when the mail server ${HOW[failure]}, and logs the failure`, async () => {
      const { t, lines, smtp } = await appWithBrokenMail(failure);
      opened.push({ t, smtp });
      const email = `new-${failure}@example.com`;
      const client = new WebClient(t.app);
      await client.get('/register');
      const response = await client.post('/register', { name: 'Mail Down', email, password: 'mail-is-down-42', password_confirmation: 'mail-is-down-42' });
      assert.equal(response.statusCode, 303);
      assert.equal(response.headers.location, '/dashboard');
      assert.ok(await t.app.services.users.findByEmail(email), 'the account is created');
      await assertFailureLogged(t, lines, smtp, { to: email, subject: 'Verify email address', link: '/email/verify/' });
      figures.push(`register/${failure}=303+logged`);
    });

    it(`sends the usual reset answer when the mail server ${HOW[failure]}, and logs the failure`, async () => {
      const { t, lines, smtp } = await appWithBrokenMail(failure);
      opened.push({ t, smtp });
      const user = await createUser(t.app, { email: `reset-${failure}@example.com` });
      const client = new WebClient(t.app);
      await client.get('/forgot-password');
      const response = await client.post('/forgot-password', { email: user.email });
      assert.equal(response.statusCode, 303);
      assert.equal(statusMessage((await client.follow(response)).body), SENT);
      await assertFailureLogged(t, lines, smtp, { to: user.email, subject: 'Reset password notification', link: '/reset-password/' });
      const row = await t.db.kysely.selectFrom('password_reset_tokens').select('email').where('email', '=', user.email.toLowerCase()).executeTakeFirst();
      assert.ok(row, 'the reset token is stored: a later mail can be asked for');
      figures.push(`reset/${failure}=303+logged`);
    });
  }
});
