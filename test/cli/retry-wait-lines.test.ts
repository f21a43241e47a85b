// Off a terminal, a wait says so when it starts and every 15 s by the clock, also through one long
// sleep (a 429's Retry-After of a minute), so a CI log never goes quiet (issue 37).
import { afterEach, describe, expect, it, vi } from 'vitest';
import { Output } from '../../src/cli/output.js';
import { retryWaits } from '../../src/cli/retry-waits.js';

afterEach(() => vi.useRealTimers());

describe('wait lines off a terminal', () => {
  it('one line at the start, then one every 15 s of a single long wait, and none after it ends', () => {
    vi.useFakeTimers();
    let stderr = '';
    const stream = { write: (chunk: string) => ((stderr += chunk), true) };
    const waits = retryWaits(new Output({ stdout: stream, stderr: stream }, false, { CI: '1' }));
    waits.wait({ method: 'GET', url: 'http://registry/limits', reason: 'HTTP 429', elapsedMs: 0, windowMs: 120_000 });
    vi.advanceTimersByTime(46_000);
    const lines = stderr.trim().split('\n');
    expect(lines).toEqual([
      'waiting for GET http://registry/limits (HTTP 429), trying again for up to 2m (the retry window)',
      'still waiting for GET http://registry/limits (HTTP 429): 15s of 2m',
      'still waiting for GET http://registry/limits (HTTP 429): 30s of 2m',
      'still waiting for GET http://registry/limits (HTTP 429): 45s of 2m',
    ]);
    waits.end();
    vi.advanceTimersByTime(60_000);
    expect(stderr.trim().split('\n')).toHaveLength(4);
  });

  it('on a terminal, a spinner redrawn in place says what is awaited and for how long, and no lines', () => {
    vi.useFakeTimers();
    let stderr = '';
    const stream = { isTTY: true, write: (chunk: string) => ((stderr += chunk), true) };
    const waits = retryWaits(new Output({ stdout: stream, stderr: stream }, false, {}));
    waits.wait({ method: 'GET', url: 'http://registry/limits', reason: 'HTTP 503', elapsedMs: 0, windowMs: 60_000 });
    vi.advanceTimersByTime(20_000);
    const frames = stderr.split('\r\x1b[2K  ').filter(Boolean);
    expect(frames.length).toBeGreaterThan(100);
    expect(frames[0]).toMatch(
      /^\S waiting for GET http:\/\/registry\/limits \(HTTP 503\): 0ms of the 1m retry window$/,
    );
    expect(frames.at(-1)).toMatch(/: 20s of the 1m retry window$/);
    expect(stderr).not.toContain('\n');
    waits.end();
    expect(stderr.endsWith('\n')).toBe(true);
  });
});
