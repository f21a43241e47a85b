// The audit log on PostgreSQL (store/audit.ts).
import type postgres from 'postgres';
import {
  auditCountSql,
  auditInsert,
  auditPageSql,
  auditWhere,
  decodeAudit,
  numbered,
  type AuditStore,
} from '../audit.js';
import { count, only } from '../rows.js';
import { now } from './columns.js';

type Values = postgres.ParameterOrJSON<never>[];

export function postgresAuditStore(sql: postgres.Sql): AuditStore {
  return {
    async audit(entry) {
      const insert = auditInsert(entry, now());
      await sql.unsafe(numbered(insert.sql), insert.params as Values);
    },
    async listAudit(filter) {
      const { where, params } = auditWhere(filter);
      const page = [...params, filter.limit, filter.offset] as Values;
      const rows = (await sql.unsafe(numbered(auditPageSql(where)), page)).map(decodeAudit);
      const counted = await sql.unsafe(numbered(auditCountSql(where)), params as Values);
      return { rows, total: only(counted, (row) => count(row, 'total'), 'the audit log') };
    },
  };
}
