// Queries on audit_logs. Plain functions of a Kysely handle (or a transaction).
import type { Expression, ExpressionBuilder, Insertable, Kysely, SqlBool } from 'kysely';
import type { AuditLogRow, AuditLogsTable, Database } from '../../db/types.js';
import { contains } from '../admin/admin.repository.js';

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

/**
 * What the audit page may narrow the log to. `search` and `actor` match anywhere, ignoring case
 * (the actor by name or email); `action` is one action; `from` and `before` bound created_at
 * (from inclusive, before exclusive, ISO times).
 */
export type AuditQuery = { search: string; actor: string; action: string | null; from: string | null; before: string | null };

function matching(query: AuditQuery) {
  return (eb: ExpressionBuilder<Database, 'audit_logs'>) => {
    const conditions: Expression<SqlBool>[] = [];
    if (query.search !== '') conditions.push(eb.or([contains('actor_name', query.search), contains('actor_email', query.search), contains('subject_label', query.search), contains('ip', query.search)]));
    if (query.actor !== '') conditions.push(eb.or([contains('actor_name', query.actor), contains('actor_email', query.actor)]));
    if (query.action !== null) conditions.push(eb('action', '=', query.action));
    if (query.from !== null) conditions.push(eb('created_at', '>=', query.from));
    if (query.before !== null) conditions.push(eb('created_at', '<', query.before));
    return eb.and(conditions);
  };
}

export async function countAuditLogsMatching(db: Q, query: AuditQuery): Promise<number> {
  const row = await db.selectFrom('audit_logs').where(matching(query)).select((eb) => eb.fn.countAll<number | string>().as('n')).executeTakeFirstOrThrow();
  return Number(row.n);
}

/** The lines matching `query`, newest first (the id breaks ties, as listAuditLogs). */
export function listAuditLogsMatching(db: Q, query: AuditQuery, limit: number, offset: number): Promise<AuditLogRow[]> {
  return db.selectFrom('audit_logs').selectAll().where(matching(query)).orderBy('created_at', 'desc').orderBy('id', 'desc').limit(limit).offset(offset).execute();
}
