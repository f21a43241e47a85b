// A flood of slow PUTs on one signed URL (60, scaled down from the 600 of issue 36): past the uploads a
// version and a publisher may have in progress they are refused at once (409, 429, with Retry-After),
// the ones let in are cut when their body comes too slowly (408), descriptors stay bounded, and another
// publisher's upload goes through meanwhile.
import { readdirSync } from 'node:fs';
import { connect } from 'node:net';
import { PassThrough } from 'node:stream';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { HttpError } from '../../../src/server/errors.js';
import { rateWatch } from '../../../src/server/services/upload-slots.js';
import { startServer } from '../../helpers.js';
import { createPublisher, createUser, makeZip, publish, uploadTo } from '../fixtures.js';

const FLOOD = 60;
const openDescriptors = () => readdirSync('/proc/self/fd').length;

interface Answer {
  status: number;
  head: string;
  body: { error?: string; message?: string };
}

/** A PUT that declares `size` bytes and sends one a quarter second; resolves to the answer (or status 0 when cut without one). */
function slowPut(signedUrl: string, size: number): Promise<Answer> {
  const url = new URL(signedUrl);
  return new Promise((resolve) => {
    const socket = connect(Number(url.port), url.hostname);
    let received = '';
    const trickle = setInterval(() => socket.write('x'), 250);
    const done = (answer: Answer) => {
      clearInterval(trickle);
      socket.destroy();
      resolve(answer);
    };
    socket.on('connect', () =>
      socket.write(
        `PUT ${url.pathname}${url.search} HTTP/1.1\r\nHost: ${url.host}\r\nContent-Type: application/zip\r\nContent-Length: ${size}\r\n\r\nPK`,
      ),
    );
    socket.on('data', (chunk) => {
      received += chunk.toString();
      const end = received.indexOf('\r\n\r\n');
      const length = Number(/content-length: (\d+)/i.exec(received)?.[1]);
      if (end < 0 || received.length < end + 4 + length) return;
      const body = JSON.parse(received.slice(end + 4, end + 4 + length));
      done({ status: Number(received.slice(9, 12)), head: received.slice(0, end), body });
    });
    socket.on('error', () => {});
    socket.on('close', () => done({ status: 0, head: '', body: {} }));
  });
}

describe('a flood of slow uploads', () => {
  it(`${FLOOD} slow PUTs on one signed URL: two let in and cut as too slow (408), the rest refused at once (409); the publisher's other upload 429; another publisher's upload succeeds`, async () => {
    const server = await startServer({ uploads: { perVersion: 2, perPublisher: 2, minRate: 1000, graceMs: 4000 } });
    try {
      const mallory = await createUser(server, 'mallory');
      const bob = await createUser(server, 'bob');
      await createPublisher(server, mallory, 'flood');
      await createPublisher(server, bob, 'bob-co');
      const zip = await makeZip();
      const target = await publish(server, mallory.token, 'flood', 'spam', '1.0.0');
      const other = await publish(server, mallory.token, 'flood', 'spam', '1.0.1');
      const bobs = await publish(server, bob.token, 'bob-co', 'tool', '1.0.0');
      const baseline = openDescriptors();

      const flood = Array.from({ length: FLOOD }, () => slowPut(target.body.signedUrl, 1_000_000));
      const answers: Answer[] = [];
      for (const put of flood) void put.then((answer) => answers.push(answer));
      // the refusals come at once, while the two let in are still sending
      await expect.poll(() => answers.length, { timeout: 20_000, interval: 50 }).toBeGreaterThanOrEqual(FLOOD - 2);
      const refused = answers.slice(0, FLOOD - 2);
      for (const answer of refused) {
        expect(answer.status, answer.head).toBe(409);
        expect(answer.body.error).toBe('conflict');
        expect(answer.body.message).toBe(
          '2 uploads of version 1.0.0 of node spam are in progress, the most there may be at once; nothing was read',
        );
        expect(answer.head).toMatch(/\r\nretry-after: 5\r\n/i);
      }
      // none of them was cut as too slow: they were refused while the two let in were in progress
      expect(answers.some((answer) => answer.status === 408)).toBe(false);

      const second = await uploadTo(other.body.signedUrl, zip);
      expect(second.status, second.text).toBe(429);
      expect(second.body.error).toBe('rate_limited');
      expect(second.headers.get('retry-after')).toBe('5');
      const bobsUpload = await uploadTo(bobs.body.signedUrl, zip);
      expect(bobsUpload.status, bobsUpload.text).toBe(200);
      // the refused connections close: what stays open is about the two uploads in progress
      await expect.poll(openDescriptors, { timeout: 10_000, interval: 100 }).toBeLessThan(baseline + 20);

      const all = await Promise.all(flood);
      const cut = all.filter((answer) => answer.status === 408);
      expect(cut).toHaveLength(2);
      for (const answer of cut) {
        expect(answer.body.error).toBe('request_timeout');
        expect(answer.body.message).toBe(
          'the upload sent fewer than 1000 bytes a second over 4 s, the least this registry takes; nothing was stored',
        );
      }
      await expect.poll(openDescriptors, { timeout: 10_000, interval: 100 }).toBeLessThan(baseline + 10);
      // with the places free again, the version takes its archive
      expect((await uploadTo(target.body.signedUrl, zip)).status).toBe(200);
    } finally {
      await server.close();
    }
  });
});

describe('the least rate of an upload body', () => {
  afterEach(() => void vi.useRealTimers());

  /** A body on a connection that has read `bytesRead` bytes. */
  const bodyOn = (socket: { bytesRead: number }) => Object.assign(new PassThrough(), { socket });

  it('aborts with a 408 once a window brings fewer bytes than the rate asks, not before the grace period', () => {
    vi.useFakeTimers();
    const socket = { bytesRead: 100 };
    const watch = rateWatch(bodyOn(socket), { minRate: 1000, graceMs: 2000 });
    socket.bytesRead += 1999; // fewer than 2000 in the first window, but it is not over yet
    vi.advanceTimersByTime(1999);
    expect(watch.signal.aborted).toBe(false);
    socket.bytesRead += 1;
    vi.advanceTimersByTime(1);
    expect(watch.signal.aborted).toBe(false);
    socket.bytesRead += 1500;
    vi.advanceTimersByTime(2000);
    expect(watch.signal.aborted).toBe(true);
    expect(watch.signal.reason).toBeInstanceOf(HttpError);
    expect((watch.signal.reason as HttpError).status).toBe(408);
  });

  it('stops watching once the whole body has arrived, and with a rate of 0', async () => {
    vi.useFakeTimers();
    const ended = bodyOn({ bytesRead: 0 });
    const watch = rateWatch(ended, { minRate: 1000, graceMs: 1000 });
    ended.end();
    ended.resume();
    await vi.advanceTimersByTimeAsync(5000);
    expect(watch.signal.aborted).toBe(false);
    const off = rateWatch(bodyOn({ bytesRead: 0 }), { minRate: 0, graceMs: 1000 });
    vi.advanceTimersByTime(5000);
    expect(off.signal.aborted).toBe(false);
  });
});
