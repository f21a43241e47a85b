import type { ServerLog } from '../../server/repeated-warnings.js';
import type { Output } from '../output.js';
import type { ServeFlags } from './options.js';

/** The access line: "GET /nodes 200 1.2ms 512B 127.0.0.1 user=- request_id=…". */
const ACCESS_LINE = /^([A-Z]+) (\S+) (\d{3}) ([\d.]+)ms (\d+)B (\S+) user=(\S+) request_id=(\S+)$/;

/**
 * Access lines and the server's other lines: as they are with a time (pretty), or one JSON object per
 * line. A line about one request ends in its id (pretty), or has it as `request_id` (JSON), as an
 * access line does.
 */
export function accessLog(format: ServeFlags['log'], out: Output): ServerLog | undefined {
  if (format === 'off') return undefined;
  if (format === 'pretty')
    return (line, _level, _kind, requestId) =>
      out.info(`${new Date().toISOString().slice(11, 19)} ${line}${requestId ? ` request_id=${requestId}` : ''}`);
  return (line, level, _kind, requestId) => {
    const request = ACCESS_LINE.exec(line);
    if (request) {
      const [, method, path, status, ms, bytes, address, user, id] = request;
      const fields = { method, path, status: Number(status), ms: Number(ms), bytes: Number(bytes), address };
      out.record(level ?? 'info', { ...fields, user: user === '-' ? null : user, request_id: id });
      return;
    }
    out.record(level ?? 'info', requestId ? { message: line, request_id: requestId } : { message: line });
  };
}
