// The development mailbox (/_dev/mail) and the development log line: outside production with
// the log mailer, a reset mail is listed, shown decoded with its link clickable and its HTML
// part framed without scripts, and the log line names its first link; ids that are not mails
// (path traversal among them) are 404; in production, or with SMTP, there is no such route and
// no link in the log; only a browser on this machine is answered.
import assert from 'node:assert/strict';
import { mkdtemp, readFile, readdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { t } from '../../src/modules/i18n/translator.js';
import { buildTestApp, createUser, type TestApp } from '../helpers.js';
import { WebClient } from '../support/client.js';
import { parseMail } from './mail-server.js';

type Setup = { t: TestApp; dir: string; lines: string[]; close(): Promise<void> };

async function appWithLogMailer(env: Record<string, string> = {}): Promise<Setup> {
  const dir = await mkdtemp(join(tmpdir(), 'tessera-dev-mail-'));
  const lines: string[] = [];
  const t = await buildTestApp({ MAIL_MAILER: 'log', DATA_DIR: dir, LOG_LEVEL: 'info', ...env }, { loggerStream: { write: (line) => void lines.push(line) } });
  return {
    t,
    dir,
    lines,
    close: async () => {
      await t.close();
      await rm(dir, { recursive: true, force: true });
    },
  };
}

/** Asks for a reset link for a new account; returns the address and the link the .eml holds. */
async function requestReset(setup: Setup, email: string): Promise<string> {
  await createUser(setup.t.app, { email });
  const client = new WebClient(setup.t.app);
  assert.equal((await client.submit('/forgot-password', '/forgot-password', { email })).statusCode, 303);
  await setup.t.app.services.mail.settled();
  const files = (await readdir(join(setup.dir, 'mail'))).filter((name) => name.endsWith('.eml'));
  const emls = await Promise.all(files.map((name) => readFile(join(setup.dir, 'mail', name), 'utf8')));
  // Decoded as the test SMTP server decodes what it receives (quoted-printable, base64).
  const mail = parseMail(emls.find((text) => text.includes(`To: ${email}`))!, [email], '');
  const link = /http:\/\/localhost:3000\/reset-password\/\S+/.exec(mail.text)?.[0];
  assert.ok(link, 'the .eml holds the reset link');
  return link;
}

const SUBJECT = t('en', 'mail.reset.subject');
const mailLines = (lines: string[]) => lines.filter((line) => line.includes('mail written to the mail directory')).map((line) => JSON.parse(line) as Record<string, unknown>);

describe('the development mailbox', () => {
  let setup: Setup;
  let link: string;
  let id: string;
  before(async () => {
    setup = await appWithLogMailer();
    link = await requestReset(setup, 'ada@example.com');
  });
  after(() => setup.close());

  it('lists the mails newest first, each opening its own page', async () => {
    await requestReset(setup, 'grace@example.com');
    const response = await setup.t.app.inject({ method: 'GET', url: '/_dev/mail' });
    assert.equal(response.statusCode, 200);
    const rows = [...response.body.matchAll(/<a href="\/_dev\/mail\/([^"]+)">([^<]+)<\/a><\/td>\s*<td[^>]*>([^<]+)<\/td>/g)];
    assert.deepEqual(
      rows.map((row) => [row[2], row[3]]),
      [
        [SUBJECT, 'grace@example.com'],
        [SUBJECT, 'ada@example.com'],
      ],
    );
    id = rows[1]![1]!;
    assert.match(response.headers['content-security-policy'] as string, /script-src 'self'/);
  });

  it('shows a mail decoded, its link whole and clickable, exactly the link the .eml holds', async () => {
    const response = await setup.t.app.inject({ method: 'GET', url: `/_dev/mail/${id}` });
    assert.equal(response.statusCode, 200);
    const href = link.replace(/&/g, '&amp;');
    assert.ok(response.body.includes(`<a href="${href}">${href}</a>`), 'the link, clickable');
    assert.ok(response.body.includes(t('en', 'mail.reset.intro')), 'the text part, decoded');
    assert.ok(response.body.includes('ada@example.com'));
    assert.ok(!/=\r?\n/.test(response.body.slice(response.body.indexOf('<pre'), response.body.indexOf('</pre>'))), 'no quoted-printable line break');
    assert.match(response.body, new RegExp(`<iframe class="dev-mail-frame" src="/_dev/mail/${id}/html" sandbox title="[^"]+"></iframe>`));
  });

  it('serves the HTML part with nothing in it allowed to run or load', async () => {
    const response = await setup.t.app.inject({ method: 'GET', url: `/_dev/mail/${id}/html` });
    assert.equal(response.statusCode, 200);
    assert.match(String(response.headers['content-type']), /^text\/html/);
    const policy = String(response.headers['content-security-policy']);
    assert.match(policy, /default-src 'none'/);
    assert.match(policy, /(^|; )sandbox($|;)/);
    assert.ok(!policy.includes('script-src'), policy);
    assert.match(response.body, /<html lang="en">/);
  });

  it('logs the first link of each mail, exactly the link in the mail (outside production only)', () => {
    const [line] = mailLines(setup.lines);
    assert.equal(line?.to, 'ada@example.com');
    assert.equal(line?.link, link);
  });

  const notMails: [string, string][] = [
    ['encoded traversal', '..%2F..%2Fapp.key'],
    ['encoded traversal to a sibling', '..%2Fmail'],
    ['dots', '%2e%2e'],
    ['a backslash', '..%5Capp.key'],
    ['a file name with its extension', 'ID.json'],
    ['a well-formed id of no mail', '2026-01-01T00-00-00-000Z-abcdef'],
    ['a word', 'latest'],
    ['a null byte', `ID%00`],
  ];
  for (const [name, raw] of notMails) {
    it(`answers 404 for ${name}`, async () => {
      const url = `/_dev/mail/${raw.replace('ID', id)}`;
      assert.equal((await setup.t.app.inject({ method: 'GET', url })).statusCode, 404, url);
      assert.equal((await setup.t.app.inject({ method: 'GET', url: `${url}/html` })).statusCode, 404, `${url}/html`);
    });
  }

  it('answers 404 for a sidecar that is not a mail, and never serves a file outside the directory', async () => {
    await writeFile(join(setup.dir, 'mail', '2026-01-01T00-00-00-000Z-000000.json'), '{"to": 1}');
    assert.equal((await setup.t.app.inject({ method: 'GET', url: '/_dev/mail/2026-01-01T00-00-00-000Z-000000' })).statusCode, 404);
    const list = await setup.t.app.inject({ method: 'GET', url: '/_dev/mail' });
    assert.ok(!list.body.includes('000000'), 'not listed');
    // A file shaped like a mail one level up (DATA_DIR): a traversal would find it.
    const outside = { to: 'outside@example.com', subject: 'Outside', date: new Date().toISOString(), text: 'outside', html: '<p>outside</p>', links: [] };
    await writeFile(join(setup.dir, 'outside.json'), JSON.stringify(outside));
    for (const raw of ['..%2Foutside', '..%5Coutside', '%2E%2E%2Foutside', '..%252Foutside']) {
      const traversal = await setup.t.app.inject({ method: 'GET', url: `/_dev/mail/${raw}` });
      assert.equal(traversal.statusCode, 404, raw);
      assert.ok(!traversal.body.includes('outside@example.com'), raw);
      assert.equal((await setup.t.app.inject({ method: 'GET', url: `/_dev/mail/${raw}/html` })).statusCode, 404, `${raw}/html`);
    }
  });

  it('answers only a browser on this machine: another address, or a request through a proxy, is refused', async () => {
    const fromAfar = await setup.t.app.inject({ method: 'GET', url: '/_dev/mail', remoteAddress: '203.0.113.7' });
    assert.equal(fromAfar.statusCode, 403);
    assert.ok(fromAfar.body.includes('only requests made from this machine'));
    assert.ok(!fromAfar.body.includes('ada@example.com'));
    const proxied = await setup.t.app.inject({ method: 'GET', url: `/_dev/mail/${id}`, headers: { 'x-forwarded-for': '203.0.113.7' } });
    assert.equal(proxied.statusCode, 403);
    assert.ok(!proxied.body.includes('reset-password'));
    const forwarded = await setup.t.app.inject({ method: 'GET', url: `/_dev/mail/${id}/html`, headers: { forwarded: 'for=203.0.113.7' } });
    assert.equal(forwarded.statusCode, 403);
  });

  it('refuses a page of another site that points its name at this machine (DNS rebinding), and answers localhost, 127.0.0.1 and APP_URL', async () => {
    for (const host of ['evil.example', 'evil.example:3000', 'localhost.evil.example', '127.0.0.1.nip.io']) {
      const response = await setup.t.app.inject({ method: 'GET', url: `/_dev/mail/${id}`, headers: { host } });
      assert.equal(response.statusCode, 403, host);
      assert.ok(!response.body.includes('reset-password'), host);
    }
    const appHost = new URL(setup.t.config.appUrl).host;
    for (const host of ['localhost:3000', '127.0.0.1:3000', '[::1]:3000', appHost]) {
      assert.equal((await setup.t.app.inject({ method: 'GET', url: `/_dev/mail/${id}`, headers: { host } })).statusCode, 200, host);
    }
  });

  it('speaks French to a French browser', async () => {
    const response = await setup.t.app.inject({ method: 'GET', url: '/_dev/mail', headers: { 'accept-language': 'fr' } });
    assert.ok(response.body.includes('Boîte aux lettres de développement'));
  });
});

describe('the development mailbox, empty', () => {
  it('says there is no mail yet when the directory does not exist', async () => {
    const setup = await appWithLogMailer();
    try {
      const response = await setup.t.app.inject({ method: 'GET', url: '/_dev/mail' });
      assert.equal(response.statusCode, 200);
      assert.ok(response.body.includes('No mail yet.'));
    } finally {
      await setup.close();
    }
  });
});

describe('where there is no development mailbox', () => {
  it('in production with the log mailer: no route (test/web/mail.test.ts checks its log line has no link)', async () => {
    const setup = await appWithLogMailer({ NODE_ENV: 'production' });
    try {
      await requestReset(setup, 'prod@example.com');
      const id = (await readdir(join(setup.dir, 'mail')))[0]!.replace(/\.(eml|json)$/, '');
      for (const url of ['/_dev/mail', '/_dev/mail/', `/_dev/mail/${id}`, `/_dev/mail/${id}/html`]) {
        assert.equal((await setup.t.app.inject({ method: 'GET', url })).statusCode, 404, url);
      }
    } finally {
      await setup.close();
    }
  });

  it('in development with the SMTP mailer: no route', async () => {
    const setup = await appWithLogMailer({ MAIL_MAILER: 'smtp', MAIL_PORT: '1' });
    try {
      assert.equal((await setup.t.app.inject({ method: 'GET', url: '/_dev/mail' })).statusCode, 404);
    } finally {
      await setup.close();
    }
  });
});
