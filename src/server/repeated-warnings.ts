// Repeated warnings of one kind (each 503 of a database or storage outage) are logged once, then at
// most once per interval with how many were not: an outage must not flood the log with a line per request.

/**
 * Server events and errors. A line given a `kind` is one of a series that may repeat (see limitRepeats);
 * one given a `requestId` is about that request (the error its answer reports).
 */
export type ServerLog = (line: string, level?: 'warn' | 'error', kind?: string, requestId?: string) => void;

/** How often a repeating warning is logged again, with the count of those left out. */
export const REPEATED_WARNING_MS = 60_000;

interface Series {
  /** Warnings of the kind not logged since its last line, and the last of them. */
  left: number;
  last: string;
  level?: 'warn' | 'error';
  timer: NodeJS.Timeout;
}

/**
 * `log`, with the lines given a kind limited: the first of a kind is logged at once; the ones after it
 * within `everyMs` are counted, and at the end of the interval the last of them is logged with the
 * count, without a request's id (that line stands for them all). A kind quiet for a whole interval
 * starts over. `flush()` logs what is counted (at close).
 */
export function limitRepeats(log: ServerLog, everyMs: number): ServerLog & { flush(): void } {
  const series = new Map<string, Series>();
  const summary = (kind: string, entry: Series) => {
    series.delete(kind);
    clearTimeout(entry.timer);
    if (entry.left === 0) return;
    log(`${entry.last} (${entry.left} time${entry.left === 1 ? '' : 's'} since the last such line)`, entry.level);
    open(kind, entry.level);
  };
  const open = (kind: string, level?: 'warn' | 'error') => {
    const entry: Series = { left: 0, last: '', level, timer: setTimeout(() => summary(kind, entry), everyMs) };
    entry.timer.unref();
    series.set(kind, entry);
  };
  const limited: ServerLog = (line, level, kind, requestId) => {
    const entry = kind === undefined ? undefined : series.get(kind);
    if (entry) {
      entry.left++;
      entry.last = line;
      return;
    }
    log(line, level, undefined, requestId);
    if (kind !== undefined) open(kind, level);
  };
  return Object.assign(limited, {
    flush: () => {
      for (const [kind, entry] of [...series]) {
        summary(kind, entry);
        const reopened = series.get(kind);
        if (reopened) clearTimeout(reopened.timer);
        series.delete(kind);
      }
    },
  });
}
