// MAIL_MAILER=log in production sends no mail and writes every reset link to disk: the real
// process says so in one warning line at start; with SMTP, or outside production, it says nothing.
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { createSharedDatabase, startServerProcess, warningsIn, type SharedDatabase } from '../load/server-process.js';
import { oncePerRun } from '../support/services.js';

const MAIL_WARNING = /MAIL_MAILER/;

describe('MAIL_MAILER=log at start, as the real process', { skip: oncePerRun('a start-up warning on the configuration') }, () => {
  let database: SharedDatabase;
  before(async () => {
    database = await createSharedDatabase('sqlite');
  });
  after(() => database?.drop());

  const run = async (env: Record<string, string>): Promise<string[]> => {
    const server = await startServerProcess({ DATABASE_URL: database.url, DATA_DIR: database.dataDir, ...env });
    assert.equal(await server.stop(), 0);
    return warningsIn(server.output());
  };

  it('warns once in production, naming the variable and where the links go', async () => {
    const lines = (await run({ NODE_ENV: 'production', MAIL_MAILER: 'log', MAIL_LOG_KEEP: '50' })).filter((line) => MAIL_WARNING.test(line));
    assert.deepEqual(lines, [
      `MAIL_MAILER is log in production: no mail is sent, and every reset and verification link is written to ${join(database.dataDir, 'mail')} instead (the newest 50 kept). Set MAIL_MAILER=smtp and MAIL_HOST.`,
    ]);
  });

  it('says nothing with SMTP in production, nor with the log mailer in development', async () => {
    assert.deepEqual((await run({ NODE_ENV: 'production', MAIL_MAILER: 'smtp' })).filter((line) => MAIL_WARNING.test(line)), []);
    assert.deepEqual((await run({ NODE_ENV: 'development', MAIL_MAILER: 'log' })).filter((line) => MAIL_WARNING.test(line)), []);
  });
});
