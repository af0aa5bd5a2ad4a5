// The service's PostgreSQL connections carry a statement timeout (a stalled database becomes a
// 503); the connections for migrations and the CLI do not (a large CREATE INDEX is legitimate).
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { sql } from 'kysely';
import { connect } from '../../src/db/connect.js';
import { TEST_DATABASE_URL } from '../helpers.js';
import { needsPostgres } from '../support/services.js';

describe('PostgreSQL statement timeouts', { skip: needsPostgres }, () => {
  const timeoutOf = async (requestTimeouts?: boolean) => {
    const db = connect(TEST_DATABASE_URL, requestTimeouts === undefined ? {} : { requestTimeouts });
    try {
      const result = await sql<{ statement_timeout: string }>`show statement_timeout`.execute(db.kysely);
      return result.rows[0]?.statement_timeout;
    } finally {
      await db.close();
    }
  };

  it('limits statements to 3 s on the service connection', async () => {
    assert.equal(await timeoutOf(), '3s');
  });

  it('sets no limit on a connection for migrations and the CLI', async () => {
    assert.equal(await timeoutOf(false), '0');
  });
});
