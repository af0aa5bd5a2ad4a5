// Child process of test/unit/sqlite-gc.test.ts (node --expose-gc --import tsx): prepares many
// statements through the service's own connection (its statement cache keeps 256 and lets the
// rest go), lets the garbage collector take them while the database is open and again after it
// is closed, then prints "collected". better-sqlite3 12 aborted the process in such a collection
// on Node 24.19 and later (`Assertion failed: (env) != nullptr`, from Statement::~Statement).
import { sql } from 'kysely';
import { connect } from '../../src/db/connect.js';
import { migrateToLatest } from '../../src/db/migrator.js';

const gc = (globalThis as { gc?: () => void }).gc;
if (gc === undefined) throw new Error('run with --expose-gc');
const file = process.argv[2];
if (file === undefined) throw new Error('usage: sqlite-gc.ts <database file>');

const db = connect(`sqlite:${file}`);
await migrateToLatest(db);
for (let round = 0; round < 4; round += 1) {
  for (let i = 0; i < 1_000; i += 1) await sql`select ${sql.lit(i)} + ${round} as n`.execute(db.kysely);
  gc();
}
// Statements prepared straight on the handle, dropped at once.
for (let i = 0; i < 1_000; i += 1) db.sqlite?.prepare(`select ${i} as n`).get();
gc();
await db.close();
gc();
await new Promise((resolve) => setTimeout(resolve, 50));
gc();
console.log('collected');
