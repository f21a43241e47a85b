// The audit log on SQLite (store/audit.ts).
import { auditCountSql, auditInsert, auditPageSql, auditWhere, decodeAudit, type AuditStore } from '../audit.js';
import { count, only } from '../rows.js';
import { now, type SqliteAccess } from './access.js';

export function sqliteAuditStore(access: SqliteAccess): AuditStore {
  return {
    async audit(entry) {
      const { sql, params } = auditInsert(entry, now());
      access.prepare(sql).run(...params);
    },
    async listAudit(filter) {
      const { where, params } = auditWhere(filter);
      const rows = access.all(auditPageSql(where), ...params, filter.limit, filter.offset).map(decodeAudit);
      const total = only(access.all(auditCountSql(where), ...params), (row) => count(row, 'total'), 'the audit log');
      return { rows, total };
    },
  };
}
