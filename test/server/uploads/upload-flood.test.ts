// A flood of slow PUTs on one signed URL (60, scaled down from the 600 of issue 36): past the uploads a
// version and a publisher may have in progress they are refused at once (409, 429, with Retry-After),
// the ones let in are cut when their body comes too slowly (408), descriptors stay bounded, and another
// publisher's upload goes through meanwhile.
import { readdirSync } from 'node:fs';
import { connect, type Socket } from 'node:net';
import { PassThrough } from 'node:stream';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { HttpError } from '../../../src/server/errors.js';
import { rateWatch, type UploadLimits } from '../../../src/server/services/upload-slots.js';
import { startServer } from '../../helpers.js';
import { createPublisher, createUser, makeZip, publish, uploadTo } from '../fixtures.js';

const FLOOD = 60;
const openDescriptors = () => readdirSync('/proc/self/fd').length;

interface Answer {
  status: number;
  head: string;
  body: { error?: string; message?: string };
}

/** Slow PUTs' sockets, so that a test can end the ones still open. */
const sockets: Socket[] = [];

/** A PUT that declares `size` bytes and sends one a quarter second; resolves to the answer (or status 0 when cut without one). */
function slowPut(signedUrl: string, size: number): Promise<Answer> {
  const url = new URL(signedUrl);
  return new Promise((resolve) => {
    const socket = connect(Number(url.port), url.hostname);
    sockets.push(socket);
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

/** A server with two publishers, mallory's two versions and bob's one, published. */
async function setUp(uploads: UploadLimits) {
  const server = await startServer({ uploads });
  const mallory = await createUser(server, 'mallory');
  const bob = await createUser(server, 'bob');
  await createPublisher(server, mallory, 'flood');
  await createPublisher(server, bob, 'bob-co');
  const target = (await publish(server, mallory.token, 'flood', 'spam', '1.0.0')).body.signedUrl as string;
  const other = (await publish(server, mallory.token, 'flood', 'spam', '1.0.1')).body.signedUrl as string;
  const bobs = (await publish(server, bob.token, 'bob-co', 'tool', '1.0.0')).body.signedUrl as string;
  return { server, target, other, bobs, zip: await makeZip() };
}

describe('a flood of slow uploads', () => {
  afterEach(() => {
    for (const socket of sockets.splice(0)) socket.destroy();
  });

  it(`${FLOOD} slow PUTs on one signed URL: two let in, the rest refused at once (409); the publisher's other upload 429; another publisher's upload succeeds; descriptors stay bounded`, async () => {
    // no least rate here: the two let in stay in progress for as long as the test needs
    const { server, target, other, bobs, zip } = await setUp({ perVersion: 2, perPublisher: 2, minRate: 0 });
    try {
      const baseline = openDescriptors();
      const flood = Array.from({ length: FLOOD }, () => slowPut(target, 1_000_000));
      const answers: Answer[] = [];
      for (const put of flood) void put.then((answer) => answers.push(answer));
      await expect.poll(() => answers.length, { timeout: 30_000, interval: 50 }).toBe(FLOOD - 2);
      for (const answer of answers) {
        expect(answer.status, answer.head).toBe(409);
        expect(answer.body.error).toBe('conflict');
        expect(answer.body.message).toBe(
          '2 uploads of version 1.0.0 of node spam are in progress, the most there may be at once; nothing was read',
        );
        expect(answer.head).toMatch(/\r\nretry-after: 5\r\n/i);
      }
      const second = await uploadTo(other, zip);
      expect(second.status, second.text).toBe(429);
      expect(second.body.error).toBe('rate_limited');
      expect(second.headers.get('retry-after')).toBe('5');
      const bobsUpload = await uploadTo(bobs, zip);
      expect(bobsUpload.status, bobsUpload.text).toBe(200);
      // the refused connections close: what stays open is about the two uploads in progress
      await expect.poll(openDescriptors, { timeout: 20_000, interval: 100 }).toBeLessThan(baseline + 20);
      expect(answers).toHaveLength(FLOOD - 2);
      for (const socket of sockets) socket.destroy();
      await Promise.all(flood);
      // with the places free again, the version takes its archive
      await expect.poll(async () => (await uploadTo(target, zip)).status, { timeout: 20_000, interval: 200 }).toBe(200);
    } finally {
      await server.close();
    }
  });

  it('an upload whose body comes slower than the least rate is cut with 408 and its connection closed; the version then takes a fast one', async () => {
    const { server, target, zip } = await setUp({ perVersion: 2, perPublisher: 2, minRate: 1000, graceMs: 1000 });
    try {
      const slow = await Promise.all([slowPut(target, 1_000_000), slowPut(target, 1_000_000)]);
      for (const answer of slow) {
        expect(answer.status, answer.head).toBe(408);
        expect(answer.body.error).toBe('request_timeout');
        expect(answer.body.message).toBe(
          'the upload sent fewer than 1000 bytes a second over 1 s, the least this registry takes; nothing was stored',
        );
        expect(answer.head).toMatch(/\r\nconnection: close\r\n/i);
      }
      await expect.poll(async () => (await uploadTo(target, zip)).status, { timeout: 20_000, interval: 200 }).toBe(200);
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
