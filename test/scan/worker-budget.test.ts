// A hostile archive must not hold the registry's scan workers (the attacker's review): files that parse
// slowly (garbage: 4 MiB of random brackets takes ~45 s) are given up at the parse limits and Flagged for
// review like a file too large to parse, and one publisher's flood of uploads neither fills the scan
// queue for the others nor goes before them. Each runs a real server on port 0 with a temp data dir,
// its scan in worker threads, with parse limits of 1 s per file and 2 s per upload (the defaults,
// SCAN_PARSE_MS and SCAN_BUDGET_MS in src/shared/scan.ts, are minutes: the same rule, slower to show).
import { describe, expect, it } from 'vitest';
import { SCAN_QUEUE_PER_PUBLISHER } from '../../src/contract/limits.js';
import { SCAN_QUEUE_RETRY_AFTER_S } from '../../src/shared/tuning.js';
import { latency } from '../figures.js';
import { startServer, type TestServer } from '../helpers.js';
import { createPublisher, createUser, garbage, makeZip, publish, uploadTo, type Reply } from '../server/fixtures.js';

const SCAN_PARSE_MS = 1_000;
const SCAN_BUDGET_MS = 2_000;
const limited = () =>
  // the scan queue per publisher, not the caps of uploads in progress (upload-flood.test.ts), refuses the flood here
  startServer({
    accessLog: false,
    scanLimits: { parseMs: SCAN_PARSE_MS, budgetMs: SCAN_BUDGET_MS },
    uploads: { perVersion: 1_000, perPublisher: 1_000 },
  });

/** /healthz answers 10 times in a row; the slowest is figure `name` (its target is `npm run bench latency`'s). */
async function healthAnswers(server: TestServer, name: string): Promise<void> {
  const times: number[] = [];
  for (let i = 0; i < 10; i++) {
    const started = performance.now();
    const answer = await fetch(`${server.url}/healthz`);
    await answer.arrayBuffer();
    expect(answer.status).toBe(200);
    times.push(performance.now() - started);
  }
  latency(name, times, 1);
}

describe('an archive of files that parse slowly', () => {
  it(`is given up at ${SCAN_PARSE_MS / 1000} s per file and ${SCAN_BUDGET_MS / 1000} s per upload: Flagged naming the file and the limit (16 such files held a worker for the whole 10-minute limit)`, async () => {
    const server = await limited();
    try {
      const owner = await createUser(server);
      await createPublisher(server, owner, 'acme');
      const files = Object.fromEntries(
        Array.from({ length: 16 }, (_, i) => [`g${String(i).padStart(2, '0')}.py`, garbage(i + 1, 1024 * 1024)]),
      );
      const zip = await makeZip(files);
      const url = (await publish(server, owner.token, 'acme', 'slow', '1.0.0')).body.signedUrl as string;
      const started = performance.now();
      const uploading = uploadTo(url, zip);
      // while the worker parses, the event loop is free
      await new Promise((resolve) => setTimeout(resolve, 1000));
      await healthAnswers(server, 'scan.slow_parse_healthz_max_ms');
      const uploaded = await uploading;
      const seconds = (performance.now() - started) / 1000;
      expect(uploaded.status, uploaded.text).toBe(200);
      expect(seconds, `the upload was answered after ${seconds.toFixed(1)} s`).toBeLessThan(SCAN_BUDGET_MS / 1000 + 15);
      // (on a quiet machine a file's parse may end in time: then a later file is named)
      const limit = `its parse took longer than ${SCAN_PARSE_MS / 1000} s, the limit per file|the scan had run ${SCAN_BUDGET_MS / 1000} s, its limit, before this file was parsed`;
      expect(uploaded.body).toMatchObject({
        status: 'NodeVersionStatusFlagged',
        status_reason: expect.stringMatching(
          new RegExp(
            `^scan: could not scan g\\d\\d\\.py \\((${limit})\\), which names what dynamic-execution looks for; an admin must review it$`,
          ),
        ),
        findings: [],
      });
      // the worker is free again: the next upload is scanned as usual
      const next = (await publish(server, owner.token, 'acme', 'next', '1.0.0')).body.signedUrl as string;
      expect((await uploadTo(next, await makeZip({ 'run.py': 'import os\nos.system(cmd)\n' }))).body).toMatchObject({
        status: 'NodeVersionStatusFlagged',
        status_reason: 'scan: command-injection at run.py:2',
      });
    } finally {
      await server.close();
    }
  }, 60_000);
});

describe('the scan queue, per publisher', () => {
  it(`one publisher's flood of uploads: ${SCAN_QUEUE_PER_PUBLISHER} taken, the rest 503 with Retry-After naming it; another publisher's upload is taken and scanned before the flood's; /healthz answers`, async () => {
    const server = await limited();
    try {
      const flooder = await createUser(server);
      const other = await createUser(server);
      await createPublisher(server, flooder, 'flood');
      await createPublisher(server, other, 'other');
      // each held a worker for 15–20 s (now the 1 s parse limit): past the 64 places of the queue, which the flood filled, every other upload was 503
      const slow = await makeZip({ 'g.py': garbage(7, 1024 * 1024) });
      const FLOOD = 70;
      const urls: string[] = [];
      for (let i = 0; i < FLOOD; i++)
        urls.push((await publish(server, flooder.token, 'flood', 'flooded', `1.0.${i}`)).body.signedUrl);
      const answers: Reply[] = [];
      const flood = urls.map((url) => uploadTo(url, slow).then((reply) => answers.push(reply)));
      for (
        const started = Date.now();
        answers.length < FLOOD - SCAN_QUEUE_PER_PUBLISHER && Date.now() - started < 30_000;
      ) {
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
      expect(answers.length, 'the flood past its share was not refused').toBe(FLOOD - SCAN_QUEUE_PER_PUBLISHER);
      for (const refused of answers) {
        expect(refused.status, refused.text).toBe(503);
        expect(refused.headers.get('retry-after')).toBe(String(SCAN_QUEUE_RETRY_AFTER_S));
        expect(refused.body).toEqual({
          error: 'unavailable',
          message: expect.stringContaining(
            `publisher flood has ${SCAN_QUEUE_PER_PUBLISHER} uploads being scanned or waiting`,
          ),
        });
      }
      await healthAnswers(server, 'scan.publisher_flood_healthz_max_ms');

      // the other publisher's upload waits for the scan under way at most, not for the flood's queue
      const url = (await publish(server, other.token, 'other', 'honest', '1.0.0')).body.signedUrl as string;
      const finished = () => answers.filter((reply) => reply.status === 200).length;
      const finishedBefore = finished();
      const started = performance.now();
      const uploaded = await uploadTo(
        url,
        await makeZip({ 'run.py': 'import os\nos.system(cmd)\n', 'ok.py': 'import json\n' }),
      );
      const seconds = (performance.now() - started) / 1000;
      expect(uploaded.status, uploaded.text).toBe(200);
      expect(uploaded.body).toMatchObject({
        status: 'NodeVersionStatusFlagged',
        status_reason: 'scan: command-injection at run.py:2',
      });
      expect(seconds, `answered after ${seconds.toFixed(1)} s`).toBeLessThan(SCAN_PARSE_MS / 1000 + 10);
      expect(
        finished() - finishedBefore,
        "flood uploads finished while the other publisher's waited",
      ).toBeLessThanOrEqual(2);
      void Promise.allSettled(flood);
    } finally {
      await server.close();
    }
  }, 60_000);
});
