// An outage's 503s are logged once, then at most once per interval with how many were left out: 100
// refused downloads do not make 100 warning lines, and the counts add up.
import { afterEach, describe, expect, it, vi } from 'vitest';
import { createLocalArchiveStorage, StorageUnavailableError } from '../../src/server/archives/storage.js';
import { limitRepeats } from '../../src/server/repeated-warnings.js';
import { startServer, tempDir } from '../helpers.js';
import { call, createPublisher, createUser, expectError, publishAndUpload } from './fixtures.js';

const ARCHIVE = '/archives/acme/tool/1.0.0/node.zip';

/** How many warnings `lines` stand for: one each, or the count a line says it stands for. */
const represented = (lines: string[]) =>
  lines.reduce((sum, line) => sum + Number(/\((\d+) times? since the last such line\)$/.exec(line)?.[1] ?? 1), 0);

describe('repeated warnings', () => {
  afterEach(() => void vi.useRealTimers());

  it('100 503s of a storage outage log a handful of lines, whose counts add up to 100', async () => {
    const logged: { line: string; level?: string }[] = [];
    const local = createLocalArchiveStorage(tempDir());
    const outage = { on: false };
    const archives = {
      ...local,
      open: (key: string, range?: Parameters<typeof local.open>[1]) =>
        outage.on ? Promise.reject(new StorageUnavailableError('the bucket is away')) : local.open(key, range),
    };
    const server = await startServer({
      archives,
      accessLog: false,
      log: (line, level) => void logged.push({ line, level }),
      // longer than the test: every repeat is counted, and the count is logged at close
      repeatedWarningEvery: 600_000,
    });
    const alice = await createUser(server, 'alice');
    await createPublisher(server, alice, 'acme');
    await publishAndUpload(server, alice.token, 'acme', 'tool', '1.0.0');
    outage.on = true;
    for (let round = 0; round < 10; round++) {
      const answers = await Promise.all(Array.from({ length: 10 }, () => call(server.url, 'GET', ARCHIVE)));
      for (const answer of answers) expectError(answer, 503, 'unavailable');
    }
    await server.close();
    const outageLines = logged.filter(({ line }) =>
      line.startsWith('archive storage unavailable (the bucket is away)'),
    );
    expect(outageLines.map(({ line }) => line)).toEqual([
      expect.stringMatching(/: answered 503$/),
      expect.stringMatching(/: answered 503 \(99 times since the last such line\)$/),
    ]);
    expect(outageLines.every(({ level }) => level === 'warn')).toBe(true);
    expect(represented(outageLines.map(({ line }) => line))).toBe(100);
  });

  it('logs the first of a kind at once, then once per interval with the count; kinds apart; a quiet kind starts over', () => {
    vi.useFakeTimers();
    const lines: string[] = [];
    const log = limitRepeats((line) => void lines.push(line), 1000);
    for (let i = 1; i <= 5; i++) log(`a ${i}`, 'warn', 'a');
    log('b 1', 'warn', 'b');
    log('plain 1');
    log('plain 2');
    expect(lines).toEqual(['a 1', 'b 1', 'plain 1', 'plain 2']);
    vi.advanceTimersByTime(1000);
    expect(lines.slice(4)).toEqual(['a 5 (4 times since the last such line)']);
    for (let i = 6; i <= 8; i++) log(`a ${i}`, 'warn', 'a');
    vi.advanceTimersByTime(999);
    expect(lines).toHaveLength(5);
    vi.advanceTimersByTime(1);
    expect(lines.slice(5)).toEqual(['a 8 (3 times since the last such line)']);
    vi.advanceTimersByTime(5000); // a whole interval quiet: the series ends, nothing more is said
    expect(lines).toHaveLength(6);
    log('a 9', 'warn', 'a');
    log('a 10', 'warn', 'a');
    log.flush();
    expect(lines.slice(6)).toEqual(['a 9', 'a 10 (1 time since the last such line)']);
    expect(represented(lines.filter((line) => line.startsWith('a ')))).toBe(10);
  });

  it("logs the first of a kind with its request's id, and the count line, which stands for many requests, with none", () => {
    vi.useFakeTimers();
    const lines: [string, string | undefined][] = [];
    const log = limitRepeats((line, _level, _kind, requestId) => void lines.push([line, requestId]), 1000);
    for (let i = 1; i <= 3; i++) log(`a ${i}`, 'warn', 'a', `request-${i}`);
    log('plain', 'error', undefined, 'request-4');
    vi.advanceTimersByTime(1000);
    log('a 4', 'warn', 'a', 'request-5');
    log.flush();
    expect(lines).toEqual([
      ['a 1', 'request-1'],
      ['plain', 'request-4'],
      ['a 3 (2 times since the last such line)', undefined],
      ['a 4 (1 time since the last such line)', undefined],
    ]);
  });
});
