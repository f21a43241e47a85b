// GET /metrics (admins only) in Prometheus' text format, read by a parser library after a publish, a
// download, a 503 and rate-limit refusals; the request id (X-Request-Id, or one made) echoed and in
// every log line of its request; the access log's client address, user, status, bytes and duration.
import parsePrometheusTextFormat from 'parse-prometheus-text-format';
import { describe, expect, it } from 'vitest';
import { Output } from '../../src/cli/output.js';
import { accessLog } from '../../src/cli/serve/access-log.js';
import { createLocalArchiveStorage, StorageUnavailableError } from '../../src/server/archives/storage.js';
import { createMetrics, PendingObservations, requestCounter, timedStore } from '../../src/server/metrics.js';
import type { RegistryStore } from '../../src/server/store/registry-store.js';
import type { ServerLog } from '../../src/server/repeated-warnings.js';
import { startServer, tempDir } from '../helpers.js';
import { call, createPublisher, createUser, expectError, makeZip, publishAndUpload } from './fixtures.js';

const ARCHIVE = '/archives/acme/tool/1.0.0/node.zip';

describe('GET /metrics, request ids and the access log', () => {
  it('counts a publish, a download, a 503 and rate-limit refusals by route pattern; a parser reads it', async () => {
    const logged: string[] = [];
    // serve's JSON log writer: the error an answer reports carries the request's id
    const records: Record<string, unknown>[] = [];
    const stderr = { write: (text: string) => records.push(JSON.parse(text)) > 0 };
    const json = accessLog('json', new Output({ stdout: stderr, stderr }, false, {}))!;
    const local = createLocalArchiveStorage(tempDir());
    const outage = { on: false };
    const archives = {
      ...local,
      open: (key: string, range?: Parameters<typeof local.open>[1]) =>
        outage.on ? Promise.reject(new StorageUnavailableError('the bucket is away')) : local.open(key, range),
    };
    const log: ServerLog = (line, level, kind, requestId) => {
      logged.push(line);
      json(line, level, kind, requestId);
    };
    const server = await startServer({ archives, rateLimit: 4, log });
    try {
      const alice = await createUser(server, 'alice');
      await createPublisher(server, alice, 'acme');
      const zip = await makeZip({ 'node.py': '# tool 1.0.0\n' });
      await publishAndUpload(server, alice.token, 'acme', 'tool', '1.0.0', {}, zip);

      const download = await call(server.url, 'GET', ARCHIVE, { headers: { 'x-request-id': 'probe-7:a' } });
      expect(download.status).toBe(200);
      expect(download.headers.get('x-request-id')).toBe('probe-7:a');
      outage.on = true;
      const refused = await call(server.url, 'GET', ARCHIVE, { headers: { 'x-request-id': 'outage-1' } });
      expectError(refused, 503, 'unavailable');
      // a header that is too long or would break a log line is replaced by an id of the server's own
      const unsafe = await call(server.url, 'GET', '/healthz', { headers: { 'x-request-id': 'a b'.repeat(60) } });
      expect(unsafe.headers.get('x-request-id')).toMatch(/^[0-9a-f-]{36}$/);
      const anonymous = [];
      for (let i = 0; i < 6; i++) anonymous.push((await call(server.url, 'POST', '/publishers', { body: {} })).status);
      expect(anonymous).toContain(429);

      // the warning of the 503 carries its request's id; the access lines carry address, user, bytes
      expect(records).toContainEqual(
        expect.objectContaining({
          level: 'warn',
          message: expect.stringMatching(/^archive storage unavailable .*answered 503$/),
          request_id: 'outage-1',
        }),
      );
      expect(records).toContainEqual(expect.objectContaining({ path: ARCHIVE, status: 503, request_id: 'outage-1' }));
      const access = logged.find((line) => line.startsWith(`GET ${ARCHIVE} 200 `));
      expect(access).toMatch(/^GET \S+ 200 \d+\.\dms (\d+)B 127\.0\.0\.1 user=- request_id=probe-7:a$/);
      expect(Number(/ (\d+)B /.exec(access!)![1])).toBeGreaterThan(zip.length);
      expect(logged).toContainEqual(
        expect.stringMatching(new RegExp(`^POST /publishers 201 \\S+ \\d+B 127\\.0\\.0\\.1 user=${alice.id} `)),
      );

      expectError(await call(server.url, 'GET', '/metrics'), 401, 'unauthorized');
      expectError(await call(server.url, 'GET', '/metrics', { token: alice.token }), 403, 'forbidden');
      const scraped = await call(server.url, 'GET', '/metrics', { token: server.adminToken });
      expect(scraped.status).toBe(200);
      expect(scraped.headers.get('content-type')).toMatch(/^text\/plain; version=0\.0\.4/);
      const families = new Map(parsePrometheusTextFormat(scraped.text).map((family) => [family.name, family]));
      const samples = (name: string) => families.get(name)?.metrics ?? [];
      const requests = samples('nodereg_http_requests_total');
      const count = (route: string, status: string) =>
        Number(requests.find((s) => s.labels?.route === route && s.labels?.status === status)?.value ?? 0);
      const archiveRoute = '/archives/:publisherId/:nodeId/:version/node.zip';
      expect(count(archiveRoute, '200')).toBe(1);
      expect(count(archiveRoute, '503')).toBe(1);
      expect(requests.some((s) => s.labels?.method === 'POST' && s.labels?.status === '201')).toBe(true);
      expect(count('/publishers', '429')).toBeGreaterThan(0);
      // route patterns only: no raw path (an id) is ever a label
      expect(requests.filter((s) => s.labels?.route?.includes('acme'))).toEqual([]);
      expect(Number(samples('nodereg_upload_bytes_total')[0]?.value)).toBe(zip.length);
      expect(Number(samples('nodereg_rate_limited_total')[0]?.value)).toBe(count('/publishers', '429'));
      // the parser reads histograms' buckets only, not their labelled counts: those are read from the text
      for (const name of ['http_request_duration', 'database_duration', 'storage_duration', 'scan_duration'])
        expect(families.get(`nodereg_${name}_seconds`)?.type).toBe('HISTOGRAM');
      const histogramCount = (series: string) =>
        Number(new RegExp(`^${series.replace(/[{}]/g, '\\$&')} (\\d+)$`, 'm').exec(scraped.text)?.[1] ?? 0);
      expect(histogramCount('nodereg_storage_duration_seconds_count{operation="open",outcome="error"}')).toBe(1);
      expect(histogramCount('nodereg_scan_duration_seconds_count')).toBeGreaterThan(0);
      expect(scraped.text).toMatch(/^nodereg_database_duration_seconds_count\{operation="\w+",outcome="ok"\} \d+$/m);
      expect(
        histogramCount(
          `nodereg_http_request_duration_seconds_count{route="${archiveRoute}",method="GET",status="503"}`,
        ),
      ).toBe(1);
      expect(Number(samples('nodereg_scan_queue_length')[0]?.value)).toBe(0);
    } finally {
      await server.close();
    }
  });

  it("writes a line about a request with the request's id at its end (pretty) or as request_id (JSON)", () => {
    const written: string[] = [];
    const stream = { write: (text: string) => written.push(text) > 0 };
    const output = new Output({ stdout: stream, stderr: stream }, false, {});
    accessLog('pretty', output)!('internal error: boom', 'error', undefined, 'probe-9');
    accessLog('pretty', output)!('made the schema');
    accessLog('json', output)!('internal error: boom', 'error', undefined, 'probe-9');
    expect(written[0]).toMatch(/^\d\d:\d\d:\d\d internal error: boom request_id=probe-9\n$/);
    expect(written[1]).toMatch(/^\d\d:\d\d:\d\d made the schema\n$/);
    expect(JSON.parse(written[2])).toMatchObject({
      level: 'error',
      message: 'internal error: boom',
      request_id: 'probe-9',
    });
  });

  it('hands observations to prom-client a batch at a time, and every one of them to a scrape', async () => {
    const seen: number[] = [];
    const pending = new PendingObservations();
    for (let i = 0; i < 1023; i++) pending.add((value) => seen.push(value), i);
    expect(seen).toHaveLength(0);
    pending.add((value) => seen.push(value), 1023);
    expect(seen).toEqual(Array.from({ length: 1024 }, (_, i) => i));

    const metrics = createMetrics();
    const count = requestCounter(metrics);
    for (let i = 0; i < 1500; i++) count('/nodes/:nodeId', 'GET', 200, 0.002);
    const scraped = parsePrometheusTextFormat(await metrics.registry.metrics());
    const requests = scraped.find(({ name }) => name === 'nodereg_http_requests_total');
    expect(requests?.metrics).toEqual([
      { labels: { route: '/nodes/:nodeId', method: 'GET', status: '200' }, value: '1500' },
    ]);
    const seconds = scraped.find(({ name }) => name === 'nodereg_http_request_duration_seconds');
    expect(seconds?.metrics[0]).toMatchObject({ buckets: { '0.001': '0', '0.005': '1500', '+Inf': '1500' } });
    const { values } = await metrics.requestSeconds.get();
    const total = (suffix: string) => values.find(({ metricName }) => metricName?.endsWith(suffix))?.value;
    expect(total('_count')).toBe(1500);
    expect(total('_sum')).toBeCloseTo(3);
  });

  it("times a store call from its start: a SQLite store's work is done before its promise is returned", async () => {
    const metrics = createMetrics();
    const busyFor = (ms: number) => {
      const until = performance.now() + ms;
      while (performance.now() < until);
    };
    const store = timedStore(
      {
        // an async function whose work is synchronous, as the SQLite store's are
        async getNodeState() {
          busyFor(30);
          return undefined;
        },
      } as unknown as RegistryStore,
      metrics,
    );
    await store.getNodeState('any');
    const { values } = await metrics.databaseSeconds.get();
    const sum = values.find(({ metricName, labels }) => metricName?.endsWith('_sum') && labels.outcome === 'ok');
    expect(sum?.value).toBeGreaterThanOrEqual(0.03);
  });
});
