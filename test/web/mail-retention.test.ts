// The log mailer keeps only the newest MAIL_LOG_KEEP mails in DATA_DIR/mail: older ones (an
// earlier run's among them) are deleted, the directory is listed only now and then (at the first
// mail of a process, then once per tenth of the limit), and /_dev/mail still shows the newest.
import assert from 'node:assert/strict';
import { mkdir, mkdtemp, readFile, readdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { ConfigError } from '../../src/config.js';
import { composeMail } from '../../src/modules/mail/mail.service.js';
import { LogMailer, type MailLogger } from '../../src/modules/mail/mailer.js';
import { isMailId, mailId } from '../../src/modules/mail/mailbox.js';
import { buildTestApp, testConfig, type TestApp } from '../helpers.js';

const quiet: MailLogger = { info: () => {}, error: () => {} };

const notification = (n: number) => ({ subject: `Mail ${n}`, intro: ['Hello.'], action: { text: 'Open', url: `https://app.example/${n}` }, outro: [] });

/** The ids of the mails in `directory` (from their .json), oldest first, and every file name. */
async function contents(directory: string): Promise<{ ids: string[]; files: string[] }> {
  const files = (await readdir(directory)).sort();
  return { ids: files.filter((name) => name.endsWith('.json')).map((name) => name.slice(0, -5)).filter(isMailId), files };
}

async function sendMany(mailer: LogMailer, from: number, to: number): Promise<void> {
  for (let n = from; n <= to; n += 1) await mailer.send(composeMail(`user${n}@example.com`, 'en', 'Tessera', notification(n)));
}

describe('the log mailer keeps the newest MAIL_LOG_KEEP mails', () => {
  let dir: string;
  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'tessera-mail-keep-'));
  });
  after(() => rm(dir, { recursive: true, force: true }));

  it('deletes the older mails, both files of each, and an earlier run\'s at the first mail', async () => {
    const directory = join(dir, 'kept');
    await mkdir(directory);
    // Left by an earlier run: a year-old mail, a lone .eml (a crash between the two writes), and
    // files that are not mails, which stay.
    const old = mailId(new Date('2025-01-01T00:00:00Z'), 'aaaaaa');
    const lone = mailId(new Date('2025-01-02T00:00:00Z'), 'bbbbbb');
    await writeFile(join(directory, `${old}.eml`), 'x');
    await writeFile(join(directory, `${old}.json`), '{}');
    await writeFile(join(directory, `${lone}.eml`), 'x');
    for (let day = 1; day <= 4; day += 1) {
      const id = mailId(new Date(`2025-02-0${day}T00:00:00Z`), 'cccccc');
      await writeFile(join(directory, `${id}.eml`), 'x');
      await writeFile(join(directory, `${id}.json`), '{}');
    }
    await writeFile(join(directory, 'notes.txt'), 'mine');
    await writeFile(join(directory, 'not-a-mail.json'), '{}');

    const mailer = new LogMailer(testConfig({ MAIL_LOG_KEEP: '5' }).mail, directory, quiet);
    await sendMany(mailer, 1, 1);
    // Seven mails then: the two oldest go at once.
    const first = await contents(directory);
    assert.equal(first.files.includes(`${old}.json`) || first.files.includes(`${old}.eml`) || first.files.includes(`${lone}.eml`), false, first.files.join(' '));
    assert.equal(first.ids.length, 5);

    await sendMany(mailer, 2, 12);
    mailer.close();
    const { ids, files } = await contents(directory);
    const subjects = await Promise.all(ids.map(async (id) => (JSON.parse(await readFile(join(directory, `${id}.json`), 'utf8')) as { subject: string }).subject));
    assert.deepEqual(subjects, ['Mail 8', 'Mail 9', 'Mail 10', 'Mail 11', 'Mail 12']);
    assert.deepEqual(files.filter((name) => name.endsWith('.eml')).map((name) => name.slice(0, -4)), ids, 'each kept mail has its .eml, no deleted one has');
    assert.ok(files.includes('notes.txt') && files.includes('not-a-mail.json'), 'files that are not mails are left alone');
  });

  it('lists the directory only at the first mail and then once per tenth of the limit', async () => {
    // MAIL_LOG_KEEP=20: pruned at mails 1, 3, 5 … 21, so never more than 21 mails on disk.
    const directory = join(dir, 'every');
    const mailer = new LogMailer(testConfig({ MAIL_LOG_KEEP: '20' }).mail, directory, quiet);
    await sendMany(mailer, 1, 21);
    assert.equal((await contents(directory)).ids.length, 20, 'the 21st mail pruned');
    await sendMany(mailer, 22, 22);
    assert.equal((await contents(directory)).ids.length, 21, 'the 22nd did not list the directory');
    await sendMany(mailer, 23, 23);
    assert.equal((await contents(directory)).ids.length, 20);
    mailer.close();
  });

  it('reads MAIL_LOG_KEEP as a whole number of at least 1, 200 by default', () => {
    assert.equal(testConfig().mail.logKeep, 200);
    assert.equal(testConfig({ MAIL_LOG_KEEP: '1000' }).mail.logKeep, 1000);
    for (const value of ['0', '-3', 'ten', '1.5']) assert.throws(() => testConfig({ MAIL_LOG_KEEP: value }), (error: unknown) => error instanceof ConfigError && /MAIL_LOG_KEEP/.test(error.message));
  });
});

describe('/_dev/mail with MAIL_LOG_KEEP', () => {
  let dir: string;
  let t: TestApp;
  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'tessera-mail-keep-app-'));
    t = await buildTestApp({ MAIL_MAILER: 'log', DATA_DIR: dir, MAIL_LOG_KEEP: '3' });
  });
  after(async () => {
    await t?.close();
    await rm(dir, { recursive: true, force: true });
  });

  it('shows the newest mails, and the deleted ones are gone (404)', async () => {
    const mails = t.app.services.mail;
    for (let n = 1; n <= 5; n += 1) {
      mails.dispatch(composeMail(`reader${n}@example.com`, 'en', 'Tessera', notification(n)));
      await mails.settled();
    }
    const list = await t.app.inject({ method: 'GET', url: '/_dev/mail' });
    assert.equal(list.statusCode, 200);
    const rows = [...list.body.matchAll(/<a href="\/_dev\/mail\/([^"]+)">([^<]+)<\/a><\/td>\s*<td[^>]*>([^<]+)<\/td>/g)];
    assert.deepEqual(rows.map((row) => row[3]), ['reader5@example.com', 'reader4@example.com', 'reader3@example.com']);
    for (const row of rows) assert.equal((await t.app.inject({ method: 'GET', url: `/_dev/mail/${row[1]}` })).statusCode, 200);
    const { ids } = await contents(join(dir, 'mail'));
    assert.equal(ids.length, 3);
  });
});
