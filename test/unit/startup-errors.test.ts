// The lines of src/startup-errors.ts for the shapes of error the drivers give that the process
// tests (test/faults/startup-failures.test.ts) cannot make here (a host with two addresses, DNS,
// a wrong password, a timeout), and the report around them: the stack only at LOG_LEVEL=debug or
// for a failure nobody foresaw, and never a password of the configuration.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { databaseFailureLine, startupReport, StartupError } from '../../src/startup-errors.js';
import { testConfig } from '../helpers.js';

const PG = 'postgres://tessera:hunter2@db.internal:6543/app';

function withCode(message: string, fields: Record<string, unknown>): Error {
  return Object.assign(new Error(message), fields);
}

describe('databaseFailureLine', () => {
  const cases: { name: string; url: string; error: unknown; line: string | null }[] = [
    {
      name: 'every address of the host refused (AggregateError)',
      url: 'postgres://tessera@localhost/app',
      error: Object.assign(new AggregateError([withCode('connect ECONNREFUSED ::1:5432', { code: 'ECONNREFUSED' }), withCode('connect ECONNREFUSED 127.0.0.1:5432', { code: 'ECONNREFUSED' })]), { code: 'ECONNREFUSED' }),
      line: 'DATABASE_URL: cannot connect to localhost:5432 (connection refused).',
    },
    { name: 'an unknown host', url: PG, error: withCode('getaddrinfo ENOTFOUND db.internal', { code: 'ENOTFOUND' }), line: 'DATABASE_URL: cannot connect to db.internal:6543 (host not found).' },
    {
      name: 'a wrong password',
      url: PG,
      error: withCode('password authentication failed for user "tessera"', { code: '28P01' }),
      line: 'DATABASE_URL: db.internal:6543 refused the login (password authentication failed for user "tessera").',
    },
    {
      name: 'no answer in time',
      url: PG,
      error: new Error('Connection terminated due to connection timeout'),
      line: 'DATABASE_URL: cannot connect to db.internal:6543 (no answer within 3 s).',
    },
    {
      name: 'a Unix socket',
      url: 'postgres:///app?host=/var/run/postgresql',
      error: withCode('connect ENOENT /var/run/postgresql/.s.PGSQL.5432', { code: 'ENOENT' }),
      line: 'DATABASE_URL: cannot connect to /var/run/postgresql (no such file or directory).',
    },
    { name: 'a query error (not about reaching the database)', url: PG, error: withCode('relation "users" does not exist', { code: '42P01' }), line: null },
    { name: 'a SQLite query error', url: 'sqlite:./data/app.db', error: withCode('no such table: users', { code: 'SQLITE_ERROR' }), line: null },
  ];
  for (const c of cases) {
    it(`says ${c.name} ${c.line === null ? 'is not its business' : 'in one line'}`, () => {
      assert.equal(databaseFailureLine(c.error, c.url), c.line);
    });
  }
});

describe('startupReport', () => {
  const config = (level: string) =>
    testConfig({ LOG_LEVEL: level, DATABASE_URL: PG, REDIS_URL: 'redis://:r3dis-pass@127.0.0.1:6379', MAIL_PASSWORD: 'smtp-pass-99' });

  it('is the line alone for a foreseen failure, and adds the original error at LOG_LEVEL=debug', () => {
    const cause = withCode('connect ECONNREFUSED 127.0.0.1:6543', { code: 'ECONNREFUSED' });
    const error = new StartupError('DATABASE_URL: cannot connect to 127.0.0.1:6543 (connection refused).', cause);
    assert.equal(startupReport(error, config('info')), error.message);
    const debug = startupReport(error, config('debug')).split('\n');
    assert.equal(debug[0], error.message);
    assert.match(debug[1] ?? '', /^Error: connect ECONNREFUSED/);
    assert.ok(debug.some((line) => /^\s+at /.test(line)));
  });

  it('names the port in use from the listen error', () => {
    const error = withCode('listen EADDRINUSE: address already in use 127.0.0.1:3000', { code: 'EADDRINUSE', syscall: 'listen', port: 3000 });
    assert.equal(startupReport(error, config('info')), 'PORT 3000 is already in use: stop the other process or set PORT.');
  });

  it('shows the stack of a failure nobody foresaw, with every password of the configuration masked', () => {
    const error = new Error(`cannot parse ${PG} (redis://:r3dis-pass@127.0.0.1:6379, smtp-pass-99)`);
    const report = startupReport(error, config('info'));
    assert.match(report, /^The service could not start: cannot parse postgres:\/\/tessera:\*\*\*@db\.internal:6543\/app/);
    assert.match(report, /^\s+at /m);
    assert.doesNotMatch(report, /hunter2|r3dis-pass|smtp-pass-99/);
  });
});
