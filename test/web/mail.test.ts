// The mail module: SMTP delivery (with credentials) to a real server on loopback, the log
// mailer (whole message to <data>/mail with its decoded parts beside it; in production only
// recipient and subject in the log line), the text and HTML parts, the site's name (the
// site_name setting) in every mail, and failures that are logged without the body.
import assert from 'node:assert/strict';
import { mkdtemp, readFile, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { buildApp } from '../../src/app.js';
import { loadConfig } from '../../src/config.js';
import { t } from '../../src/modules/i18n/translator.js';
import { MailService, composeMail } from '../../src/modules/mail/mail.service.js';
import { LogMailer, SmtpMailer, type MailLogger, type OutgoingMail } from '../../src/modules/mail/mailer.js';
import { TEST_APP_KEY, createTestDatabase, createUser, testConfig, type TestApp } from '../helpers.js';
import { WebClient } from '../support/client.js';
import { startMailServer, type MailServer } from './mail-server.js';
import { appWithMail, closeAppWithMail } from './support.js';

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

  it('writes the whole message to a .eml file, its decoded parts beside it, and logs only its recipient and subject', async () => {
    const { lines, logger } = captureLogger();
    const mailer = new LogMailer(testConfig().mail, join(dir, 'mail'), logger);
    await mailer.send(composeMail('log@example.com', 'en', 'Tessera', notification));
    const files = (await readdir(join(dir, 'mail'))).sort();
    assert.equal(files.length, 2);
    const [emlFile, decodedFile] = files;
    assert.match(emlFile!, /\.eml$/);
    assert.equal(decodedFile, emlFile!.replace(/\.eml$/, '.json'));
    const eml = await readFile(join(dir, 'mail', emlFile!), 'utf8');
    assert.match(eml, /^To: log@example\.com$/m);
    assert.ok(eml.replace(/=\r?\n/g, '').includes('tok3n'), 'the file holds the link');
    const decoded = JSON.parse(await readFile(join(dir, 'mail', decodedFile!), 'utf8')) as Record<string, unknown>;
    assert.equal(decoded.to, 'log@example.com');
    assert.equal(decoded.subject, 'Reset Password Notification');
    assert.deepEqual(decoded.links, [URL_WITH_QUERY]);
    assert.ok(String(decoded.text).includes(`\n${URL_WITH_QUERY}\n`), 'the text part, on one line');
    assert.equal(lines.length, 1);
    assert.deepEqual(lines[0]?.details, { to: 'log@example.com', subject: 'Reset Password Notification' });
    assert.ok(!JSON.stringify(lines).includes('tok3n'));
  });

  it('outside production, also logs the first link of the text part, whole', async () => {
    const { lines, logger } = captureLogger();
    const mailer = new LogMailer(testConfig().mail, join(dir, 'dev-mail'), logger, { development: true });
    await mailer.send(composeMail('dev@example.com', 'en', 'Tessera', notification));
    assert.deepEqual(lines[0]?.details, { to: 'dev@example.com', subject: 'Reset Password Notification', link: URL_WITH_QUERY });
  });
});

describe('MAIL_MAILER=log in the app', () => {
  it('writes the reset mail under DATA_DIR/mail, and in production no log line carries the link', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'tessera-data-'));
    const database = await createTestDatabase();
    const lines: string[] = [];
    const config = testConfig({ NODE_ENV: 'production', MAIL_MAILER: 'log', DATA_DIR: dir, LOG_LEVEL: 'info' });
    const app = await buildApp(config, { db: database.db, loggerStream: { write: (line) => void lines.push(line) } });
    await app.ready();
    try {
      const user = await createUser(app, { email: 'dev@example.com' });
      const client = new WebClient(app);
      await client.get('/forgot-password');
      assert.equal((await client.post('/forgot-password', { email: user.email })).statusCode, 303);
      await app.services.mail.settled();
      const file = (await readdir(join(dir, 'mail'))).find((name) => name.endsWith('.eml'));
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
      assert.deepEqual(sent, [{ to: 'injected@example.com', subject: 'Reset password notification' }]);
    } finally {
      await app.close();
      await database.drop();
    }
  });
});

describe('the site name in mails', () => {
  let running: TestApp | undefined;
  let server: MailServer | undefined;
  before(async () => {
    ({ t: running, mail: server } = await appWithMail({ APP_NAME: 'Tessera', MAIL_FROM_NAME: 'Tessera Mailer' }));
  });
  after(() => closeAppWithMail(running, server));

  const resetMailTo = async (email: string) => {
    await createUser(running!.app, { email });
    await new WebClient(running!.app).submit('/forgot-password', '/forgot-password', { email });
    await running!.app.services.mail.settled();
    const [message] = server!.to(email);
    assert.ok(message, `a reset mail to ${email}`);
    return message;
  };

  it('signs with APP_NAME while no site_name is set', async () => {
    const message = await resetMailTo('before@example.com');
    assert.match(message.text, /Regards,\r?\nTessera\s*$/);
  });

  it('signs with the site_name setting (header and salutation), escaped in the HTML part; the From name stays MAIL_FROM_NAME', async () => {
    await running!.app.services.settings.put('site_name', 'Ada & <Lovelace> Notes', true);
    const message = await resetMailTo('after@example.com');
    assert.equal(message.subject, t('en', 'mail.reset.subject'));
    assert.match(message.text, /Regards,\r?\nAda & <Lovelace> Notes\s*$/);
    assert.ok(!message.text.includes('Tessera'), message.text);
    assert.match(message.html, /font-weight:700;text-align:center;">Ada &amp; &lt;Lovelace&gt; Notes<\/td>/);
    assert.match(message.html, /Regards,\r?\nAda &amp; &lt;Lovelace&gt; Notes<\/p>/);
    assert.ok(!message.html.includes('Tessera'), 'no APP_NAME left in the HTML part');
    assert.match(message.raw, /^From: Tessera Mailer <hello@example\.com>/m);
  });
});

describe('MailService.notify', () => {
  it('signs with the configured defaults when the site settings cannot be read, and says so in the log', async () => {
    const { lines, logger } = captureLogger();
    const sent: OutgoingMail[] = [];
    const settings = {
      site: () => Promise.reject(new Error('database unreachable')),
      siteDefaults: () => ({ name: 'Fallback Name' }),
    };
    const service = new MailService({ send: async (mail) => void sent.push(mail), close: () => undefined }, logger, settings);
    service.notify('someone@example.com', 'en', notification);
    await service.settled();
    assert.equal(sent.length, 1);
    assert.match(sent[0]!.text, /Regards,\nFallback Name\s*$/);
    assert.deepEqual(
      lines.map((line) => [line.level, line.message]),
      [['error', 'site settings unreadable for a mail']],
    );
  });
});
