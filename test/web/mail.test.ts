// The mail module: SMTP delivery (with credentials) to a real server on loopback, the log
// mailer (whole message to <data>/mail, only recipient and subject in the log line), the text
// and HTML parts, and failures that are logged without the body.
import assert from 'node:assert/strict';
import { mkdtemp, readFile, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { buildApp } from '../../src/app.js';
import { loadConfig } from '../../src/config.js';
import { MailService, composeMail } from '../../src/modules/mail/mail.service.js';
import { LogMailer, SmtpMailer, type MailLogger } from '../../src/modules/mail/mailer.js';
import { TEST_APP_KEY, createTestDatabase, createUser, testConfig } from '../helpers.js';
import { WebClient } from '../support/client.js';
import { startMailServer, type MailServer } from './mail-server.js';

const URL_WITH_QUERY = 'https://app.example/reset-password/tok3n?email=a%2Bb%40example.com&x=1';

function captureLogger() {
  const lines: { level: string; details: Record<string, unknown>; message: string }[] = [];
  const logger: MailLogger = {
    info: (details, message) => void lines.push({ level: 'info', details: details as Record<string, unknown>, message }),
    error: (details, message) => void lines.push({ level: 'error', details: details as Record<string, unknown>, message }),
  };
  return { lines, logger };
}

const notification = {
  subject: 'Reset Password Notification',
  intro: ['You are receiving this email because <we> received a request.'],
  action: { text: 'Reset Password', url: URL_WITH_QUERY },
  outro: ['This password reset link will expire in 60 minutes.'],
};

describe('composeMail', () => {
  it('renders a text part with the link as is, and an HTML part with everything escaped', () => {
    const mail = composeMail('ada@example.com', 'en', 'Tessera', notification);
    assert.equal(mail.to, 'ada@example.com');
    assert.equal(mail.subject, 'Reset Password Notification');
    assert.ok(mail.text.includes(URL_WITH_QUERY), mail.text);
    assert.ok(mail.text.includes('<we>'), 'text is not HTML-escaped');
    assert.match(mail.text, /^Hello!/);
    assert.match(mail.text, /Regards,\nTessera\s*$/);
    assert.ok(mail.html.includes(`href="${URL_WITH_QUERY.replace(/&/g, '&amp;')}"`));
    assert.ok(mail.html.includes('&lt;we&gt;'), 'HTML is escaped');
    assert.match(mail.html, /<html lang="en">/);
  });

  it('speaks French when asked', () => {
    const mail = composeMail('ada@example.com', 'fr', 'Tessera', notification);
    assert.match(mail.text, /^Bonjour !/);
    assert.match(mail.text, /Cordialement,\nTessera/);
    assert.match(mail.html, /<html lang="fr">/);
    assert.ok(mail.html.includes('Si vous avez des difficultés à cliquer sur le bouton « Reset Password »'));
  });
});

describe('SmtpMailer', () => {
  let server: MailServer;
  before(async () => {
    server = await startMailServer({
      authOptional: false,
      allowInsecureAuth: true,
      onAuth(auth, _session, callback) {
        if (auth.username === 'mailer' && auth.password === 's3cret-pass') return callback(null, { user: 'mailer' });
        return callback(new Error('Invalid username or password'));
      },
    });
  });
  after(() => server.close());

  const config = (username: string, password: string) =>
    loadConfig({
      NODE_ENV: 'test',
      APP_KEY: TEST_APP_KEY,
      MAIL_MAILER: 'smtp',
      MAIL_HOST: '127.0.0.1',
      MAIL_PORT: String(server.port),
      MAIL_USERNAME: username,
      MAIL_PASSWORD: password,
      MAIL_ENCRYPTION: 'none',
      MAIL_FROM_ADDRESS: 'noreply@tessera.example',
      MAIL_FROM_NAME: 'Tessera Mail',
    }).mail;

  it('delivers a text + HTML message from MAIL_FROM_ADDRESS with MAIL_USERNAME/MAIL_PASSWORD', async () => {
    const mailer = new SmtpMailer(config('mailer', 's3cret-pass'));
    await mailer.send(composeMail('grace@example.com', 'en', 'Tessera', notification));
    mailer.close();
    const [message] = server.to('grace@example.com');
    assert.ok(message);
    assert.equal(message.from, 'noreply@tessera.example');
    assert.match(message.raw, /^From: Tessera Mail <noreply@tessera\.example>/m);
    assert.match(message.raw, /multipart\/alternative/);
    assert.ok(message.text.includes(URL_WITH_QUERY));
    assert.ok(message.html.includes('Reset Password'));
  });

  it('rejects when the server refuses the credentials; MailService logs it without body or password', async () => {
    const { lines, logger } = captureLogger();
    const service = new MailService(new SmtpMailer(config('mailer', 'wrong-pass')), logger);
    service.dispatch(composeMail('refused@example.com', 'en', 'Tessera', notification));
    await service.settled();
    service.close();
    assert.equal(server.to('refused@example.com').length, 0);
    const [line] = lines;
    assert.equal(line?.level, 'error');
    assert.equal(line?.message, 'mail delivery failed');
    assert.equal(line?.details.to, 'refused@example.com');
    assert.equal(line?.details.subject, 'Reset Password Notification');
    const logged = JSON.stringify(lines);
    assert.ok(!logged.includes('tok3n'), 'no link');
    assert.ok(!logged.includes('wrong-pass'), 'no password');
  });
});

describe('LogMailer', () => {
  let dir: string;
  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'tessera-mail-'));
  });
  after(() => rm(dir, { recursive: true, force: true }));

  it('writes the whole message to a .eml file and logs only its recipient and subject', async () => {
    const { lines, logger } = captureLogger();
    const mailer = new LogMailer(testConfig().mail, join(dir, 'mail'), logger);
    await mailer.send(composeMail('log@example.com', 'en', 'Tessera', notification));
    const files = await readdir(join(dir, 'mail'));
    assert.equal(files.length, 1);
    assert.match(files[0]!, /\.eml$/);
    const eml = await readFile(join(dir, 'mail', files[0]!), 'utf8');
    assert.match(eml, /^To: log@example\.com$/m);
    assert.ok(eml.replace(/=\r?\n/g, '').includes('tok3n'), 'the file holds the link');
    assert.equal(lines.length, 1);
    assert.deepEqual(lines[0]?.details, { to: 'log@example.com', subject: 'Reset Password Notification' });
    assert.ok(!JSON.stringify(lines).includes('tok3n'));
  });
});

describe('MAIL_MAILER=log in the app', () => {
  it('writes the reset mail under DATA_DIR/mail, and no log line carries the link', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'tessera-data-'));
    const database = await createTestDatabase();
    const lines: string[] = [];
    const app = await buildApp(testConfig({ MAIL_MAILER: 'log', DATA_DIR: dir, LOG_LEVEL: 'info' }), { db: database.db, loggerStream: { write: (line) => void lines.push(line) } });
    await app.ready();
    try {
      const user = await createUser(app, { email: 'dev@example.com' });
      const client = new WebClient(app);
      await client.get('/forgot-password');
      assert.equal((await client.post('/forgot-password', { email: user.email })).statusCode, 303);
      await app.services.mail.settled();
      const [file] = await readdir(join(dir, 'mail'));
      const eml = (await readFile(join(dir, 'mail', file!), 'utf8')).replace(/=\r?\n/g, '');
      const token = /reset-password\/([A-Za-z0-9_-]+)/.exec(eml)?.[1];
      assert.ok(token, 'the .eml holds the reset link');
      const mailLine = lines.find((line) => line.includes('mail written'));
      assert.ok(mailLine);
      assert.equal((JSON.parse(mailLine) as { to: string }).to, 'dev@example.com');
      assert.ok(!lines.join('\n').includes(token), 'no log line carries the token');
    } finally {
      await app.close();
      await database.drop();
      await rm(dir, { recursive: true, force: true });
    }
  });
});

describe('an injected mailer', () => {
  it('replaces the configured transport (buildApp({ mailer }))', async () => {
    const sent: { to: string; subject: string }[] = [];
    const database = await createTestDatabase();
    const app = await buildApp(testConfig({ MAIL_MAILER: 'smtp', MAIL_PORT: '1' }), {
      db: database.db,
      mailer: { send: async (message) => void sent.push({ to: message.to, subject: message.subject }), close: () => undefined },
    });
    await app.ready();
    try {
      const user = await createUser(app, { email: 'injected@example.com' });
      const client = new WebClient(app);
      await client.get('/forgot-password');
      await client.post('/forgot-password', { email: user.email });
      await app.services.mail.settled();
      assert.deepEqual(sent, [{ to: 'injected@example.com', subject: 'Reset Password Notification' }]);
    } finally {
      await app.close();
      await database.drop();
    }
  });
});
