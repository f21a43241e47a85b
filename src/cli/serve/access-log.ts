import { currentRequestId } from '../../server/request-scope.js';
import type { Output } from '../output.js';
import type { ServeFlags } from './options.js';

/** Access log lines: "GET /nodes 200 1.2ms 512B 127.0.0.1 user=- request_id=…" as is with a time (pretty), or one JSON object per line. */
export function accessLog(
  format: ServeFlags['log'],
  out: Output,
): ((line: string, level?: 'warn' | 'error') => void) | undefined {
  if (format === 'off') return undefined;
  // A line logged while a request runs gets its id (the access line has it already).
  const tagged = (line: string) => {
    const id = currentRequestId();
    return id && !line.endsWith(` request_id=${id}`) ? `${line} request_id=${id}` : line;
  };
  if (format === 'pretty') return (line) => out.info(`${new Date().toISOString().slice(11, 19)} ${tagged(line)}`);
  return (line, level) => {
    const request = /^([A-Z]+) (\S+) (\d{3}) ([\d.]+)ms (\d+)B (\S+) user=(\S+) request_id=(\S+)$/.exec(line);
    if (request) {
      const [, method, path, status, ms, bytes, address, user, id] = request;
      const fields = { method, path, status: Number(status), ms: Number(ms), bytes: Number(bytes), address };
      out.record(level ?? 'info', { ...fields, user: user === '-' ? null : user, request_id: id });
      return;
    }
    const id = currentRequestId();
    out.record(level ?? 'info', id ? { message: line, request_id: id } : { message: line });
  };
}
