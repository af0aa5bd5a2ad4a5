// Queries on audit_logs. Plain functions of a Kysely handle (or a transaction).
import type { Insertable, Kysely } from 'kysely';
import type { AuditLogRow, AuditLogsTable, Database } from '../../db/types.js';

type Q = Kysely<Database>;

export async function insertAuditLog(db: Q, row: Insertable<AuditLogsTable>): Promise<void> {
  await db.insertInto('audit_logs').values(row).execute();
}

export async function countAuditLogs(db: Q): Promise<number> {
  const row = await db.selectFrom('audit_logs').select((eb) => eb.fn.countAll<number | string>().as('n')).executeTakeFirstOrThrow();
  return Number(row.n);
}

/** Newest first; the id breaks ties between lines written in the same millisecond. */
export function listAuditLogs(db: Q, limit: number, offset: number): Promise<AuditLogRow[]> {
  return db.selectFrom('audit_logs').selectAll().orderBy('created_at', 'desc').orderBy('id', 'desc').limit(limit).offset(offset).execute();
}
