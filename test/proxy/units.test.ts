// Pure parts of the AI proxy: the sandbox timeline, reading inputs, the allow-list, the signature,
// the provider paths. Expected values are written out from DESIGN.md §4.
import { createHmac } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { signCallback } from '../../src/server/signed-callbacks.js';
import { upstreamStatusPath, upstreamSubmitPath } from '../../src/server/proxy/kinds.js';
import {
  callbackAllowProblem,
  callbackHostAllowed,
  pollSpacing,
  resolveProxyOptions,
} from '../../src/server/proxy/options.js';
import { placeholderVideo, readSource, sandboxNextChange, sandboxStep, sniff } from '../../src/server/proxy/sandbox.js';
import { forwardDecision } from '../../src/server/proxy/polling.js';
import type { TaskRow } from '../../src/server/proxy/store.js';

const PNG = Buffer.from('89504e470d0a1a0a0000000d49484452', 'hex');

describe('sandbox timeline', () => {
  it('splits the delay evenly: 3 image states over 1000 ms', () => {
    const at = (elapsed: number) => sandboxStep(3, 10_000, 1000, 10_000 + elapsed);
    expect([0, 499, 500, 999, 1000, 50_000].map(at)).toEqual([0, 0, 1, 1, 2, 2]);
  });
  it('splits the delay evenly: 4 video states over 1500 ms', () => {
    const at = (elapsed: number) => sandboxStep(4, 0, 1500, elapsed);
    expect([0, 499, 500, 999, 1000, 1499, 1500].map(at)).toEqual([0, 0, 1, 1, 2, 2, 3]);
  });
  it('a clock before creation stays at the first state; a zero delay is done at once', () => {
    expect(sandboxStep(3, 1000, 1000, 0)).toBe(0);
    expect(sandboxStep(4, 1000, 0, 1000)).toBe(3);
  });
  it('names the moment of the next state, and none after the last', () => {
    expect(sandboxNextChange(3, 0, 1000, 0)).toBe(500);
    expect(sandboxNextChange(3, 0, 1000, 500)).toBe(1000);
    expect(sandboxNextChange(3, 0, 1000, 1000)).toBeUndefined();
    expect(sandboxNextChange(4, 0, 1000, 0)).toBe(334);
    expect(sandboxStep(4, 0, 1000, 334)).toBe(1);
  });
});

describe('sandbox inputs', () => {
  it('decodes base64 and sniffs the type', () => {
    const source = readSource(PNG.toString('base64'), 'image');
    expect(source).toMatchObject({ kind: 'bytes', contentType: 'image/png', ext: '.png' });
    expect(source.kind === 'bytes' && source.bytes.equals(PNG)).toBe(true);
  });
  it('decodes a base64 data URL and base64url', () => {
    const dataUrl = readSource(`data:image/png;base64,${PNG.toString('base64')}`, 'image');
    expect(dataUrl.kind === 'bytes' && dataUrl.bytes.equals(PNG)).toBe(true);
    const jpeg = Buffer.from([0xff, 0xd8, 0xff, 0xe0, 0xfb, 0xff]);
    const url = readSource(jpeg.toString('base64url'), 'image');
    expect(url.kind === 'bytes' && url.bytes.equals(jpeg)).toBe(true);
  });
  it('keeps an http(s) URL as the result, fetching nothing', () => {
    expect(readSource('https://127.0.0.1/a.png', 'image')).toEqual({ kind: 'url', url: 'https://127.0.0.1/a.png' });
    expect(readSource('http://127.0.0.1/v.mp4', 'video')).toEqual({ kind: 'url', url: 'http://127.0.0.1/v.mp4' });
  });
  it.each(['not base64!', 'ftp://127.0.0.1/a.png', '====', 'ä'])('judges %j invalid', (value) => {
    expect(readSource(value, 'image').kind).toBe('invalid');
  });
  it('sniffs the common image and video types, and nothing else', () => {
    expect(sniff(PNG).contentType).toBe('image/png');
    expect(sniff(Buffer.from('GIF89a......')).contentType).toBe('image/gif');
    expect(sniff(Buffer.from('RIFF\0\0\0\0WEBPVP8 ')).contentType).toBe('image/webp');
    expect(sniff(Buffer.from([0x1a, 0x45, 0xdf, 0xa3, 0])).contentType).toBe('video/webm');
    expect(sniff(Buffer.from('<html><script>')).contentType).toBe('application/octet-stream');
  });
  it('makes a placeholder video that sniffs as MP4 and names its task', () => {
    const video = placeholderVideo('task-1');
    expect(sniff(video).contentType).toBe('video/mp4');
    expect(video.toString('latin1')).toContain('task-1');
  });
});

describe('callback allow-list', () => {
  const loopback = callbackHostAllowed(resolveProxyOptions().callbackAllow);
  it.each([
    'http://127.0.0.1:9/x',
    'http://127.255.0.3/x',
    'https://localhost/x',
    'http://LOCALHOST./x',
    'http://[::1]:80/',
    'http://127.1/',
  ])('allows loopback %s by default', (url) => expect(loopback(url)).toBe(true));
  it.each([
    'http://10.0.0.1/x',
    'https://example.com/x',
    'http://[::2]/',
    'http://128.0.0.1/',
    'http://localhost.example.com/',
    'not a url',
  ])('refuses %s by default', (url) => expect(loopback(url)).toBe(false));
  it('"*" allows every host', () => {
    expect(callbackHostAllowed(['*'])('https://example.com/hook')).toBe(true);
  });
  it('takes CIDR ranges, addresses, names and *.domain', () => {
    const allowed = callbackHostAllowed(['10.1.0.0/16', '192.168.1.7', 'hooks.example.test', '*.corp.test']);
    expect(allowed('http://10.1.255.1/')).toBe(true);
    expect(allowed('http://10.2.0.1/')).toBe(false);
    expect(allowed('http://192.168.1.7/')).toBe(true);
    expect(allowed('http://192.168.1.8/')).toBe(false);
    expect(allowed('https://hooks.example.test/')).toBe(true);
    expect(allowed('https://a.hooks.example.test/')).toBe(false);
    expect(allowed('https://x.corp.test/')).toBe(true);
    expect(allowed('https://corp.test.evil.test/')).toBe(false);
    expect(allowed('http://127.0.0.1/')).toBe(false);
  });
  it('names a bad entry', () => {
    expect(callbackAllowProblem(['127.0.0.0/8', '::1', 'localhost', '*', '*.corp.test'])).toBeNull();
    expect(callbackAllowProblem(['10.0.0.0/33'])).toContain('10.0.0.0/33');
    expect(callbackAllowProblem(['host name'])).toContain('host name');
    expect(callbackAllowProblem(['example.com/8'])).toContain('example.com/8');
  });
});

describe('callback signature', () => {
  it('is sha256= and the hex HMAC-SHA256 of the raw body with the callback key', () => {
    const key = Buffer.from('00112233445566778899aabbccddeeff00112233445566778899aabbccddeeff', 'hex');
    const body = '{"task_id":"t","status":"COMPLETED","generated":[]}';
    const expected = createHmac('sha256', key).update(body).digest('hex');
    expect(signCallback(key, body)).toBe(`sha256=${expected}`);
    expect(signCallback(key, `${body} `)).not.toBe(`sha256=${expected}`);
  });
});

describe('provider paths', () => {
  it('relays to the path after /proxy/img or /proxy/vid', () => {
    expect(upstreamSubmitPath('relight')).toBe('/v1/ai/image-relight');
    expect(upstreamSubmitPath('skin-enhancer')).toBe('/v1/ai/skin-enhancer/flexible');
    expect(upstreamSubmitPath('video')).toBe('/extend');
  });
  it('polls the providers status paths with their task id, encoded', () => {
    expect(upstreamStatusPath('relight', 'up-1')).toBe('/v1/ai/image-relight/up-1');
    expect(upstreamStatusPath('skin-enhancer', 'up-2')).toBe('/v1/ai/skin-enhancer/up-2');
    expect(upstreamStatusPath('video', 'a/b')).toBe('/tasks/a%2Fb/creations');
  });
});

describe('proxy options', () => {
  it('has the defaults of DESIGN.md §4', () => {
    expect(resolveProxyOptions()).toMatchObject({
      upstreamTimeout: 30_000,
      sandboxDelay: 1_500,
      callbackTimeout: 5_000,
      callbackBackoff: 1_000,
      callbackAllow: ['127.0.0.0/8', '::1', 'localhost'],
      imgKeyHeader: 'Authorization',
      vidKeyHeader: 'Authorization',
      resultTtl: 86_400_000,
    });
  });
  it('drops trailing slashes of upstream URLs and keeps what is given', () => {
    const options = resolveProxyOptions({
      imgUpstream: 'http://127.0.0.1:9/api/',
      sandboxDelay: 10,
      callbackAllow: ['*'],
    });
    expect(options.imgUpstream).toBe('http://127.0.0.1:9/api');
    expect(options.sandboxDelay).toBe(10);
    expect(options.callbackAllow).toEqual(['*']);
  });
});

describe('pollSpacing', () => {
  it('polls a young task every interval, then a tenth of its age apart, at most 30 intervals', () => {
    expect(pollSpacing(0, 2_000)).toBe(2_000);
    expect(pollSpacing(19_000, 2_000)).toBe(2_000);
    expect(pollSpacing(100_000, 2_000)).toBe(10_000);
    expect(pollSpacing(600_000, 2_000)).toBe(60_000);
    expect(pollSpacing(23 * 3_600_000, 2_000)).toBe(60_000);
  });
});

describe("a provider's view of a forwarded task", () => {
  const task = (status: string, view: object): TaskRow => ({
    id: 't1',
    kind: 'relight',
    user_id: 'u1',
    mode: 'forward',
    upstream_id: 'up-1',
    callback_url: 'http://127.0.0.1:9/cb',
    created_at: 0,
    delay_ms: 0,
    outcome: 'ok',
    status,
    view: JSON.stringify(view),
    credits: null,
    updated_at: 0,
    next_poll_at: 0,
  });
  const view = (status: string, generated: string[] = []) => ({ task_id: 't1', status, generated });

  it('moves the status forward with one callback', () => {
    const decision = forwardDecision(task('IN_PROGRESS', view('IN_PROGRESS')), view('COMPLETED', ['r.png']));
    expect(decision.observe?.status).toBe('COMPLETED');
    expect(decision.callbacks.map((c) => JSON.parse(c.body).status)).toEqual(['COMPLETED']);
  });

  it('leaves a finished task finished: an older view answered to a slower poll changes nothing, and calls back no one', () => {
    for (const finished of ['COMPLETED', 'FAILED'])
      expect(forwardDecision(task(finished, view(finished)), view('IN_PROGRESS'))).toEqual({
        callbacks: [],
        value: undefined,
      });
  });
});
