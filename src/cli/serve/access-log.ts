import type { Output } from '../output.js';
import type { ServeFlags } from './options.js';

/** Access log lines: "GET /nodes 200 1.2ms" as is with a time (pretty), or one JSON object per line. */
export function accessLog(
  format: ServeFlags['log'],
  out: Output,
): ((line: string, level?: 'warn' | 'error') => void) | undefined {
  if (format === 'off') return undefined;
  if (format === 'pretty') return (line) => out.info(`${new Date().toISOString().slice(11, 19)} ${line}`);
  return (line, level) => {
    const request = /^([A-Z]+) (\S+) (\d{3}) ([\d.]+)ms$/.exec(line);
    out.record(
      level ?? 'info',
      request
        ? { method: request[1], path: request[2], status: Number(request[3]), ms: Number(request[4]) }
        : { message: line },
    );
  };
}
