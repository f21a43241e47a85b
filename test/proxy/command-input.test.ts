// The AI proxy commands reject bad input before any request: exit 2, naming the option to fix.
// Run in-process against a registry URL where nothing listens (a request would exit 1, not 2),
// and once against a recorder that must see no request at all.
import { writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { run } from '../../src/cli/program.js';
import { checkHints } from '../cli/hint-check.js';
import { proxyOptionsFromFlags } from '../../src/cli/proxy-flags.js';
import { tempDir } from '../helpers.js';
import { startStandIn, type StandIn } from './stand-ins.js';

let closedUrl: string;
let dir: string;
let image: string;
let payloadOver: string;
let payloadEdge: string;
let empty: string;
let recorder: StandIn;

beforeAll(async () => {
  const probe = createServer();
  await new Promise<void>((resolve) => probe.listen(0, '127.0.0.1', resolve));
  const { port } = probe.address() as { port: number };
  await new Promise((resolve) => probe.close(resolve));
  closedUrl = `http://127.0.0.1:${port}`;
  dir = tempDir('nodereg-cli-proxy-');
  image = join(dir, 'photo.png');
  writeFileSync(image, Buffer.from('89504e470d0a1a0a0000000d49484452', 'hex'));
  payloadOver = join(dir, 'payload-over.txt');
  writeFileSync(payloadOver, 'p'.repeat(1_048_577));
  payloadEdge = join(dir, 'payload-edge.txt');
  writeFileSync(payloadEdge, 'p'.repeat(1_048_576));
  empty = join(dir, 'empty.png');
  writeFileSync(empty, '');
  recorder = await startStandIn(() => ({ status: 500 }));
});
afterAll(() => recorder.close());

function sink() {
  const s = { buf: '', write: (chunk: string) => ((s.buf += chunk), true) };
  return s;
}

async function cli(argv: string[], registry = closedUrl) {
  const stdout = sink();
  const stderr = sink();
  const code = await run(['--registry', registry, '--token', 'nrg_u_test', ...argv], '0.0.0-test', {
    env: { HOME: dir, XDG_CONFIG_HOME: join(dir, 'cfg'), NO_COLOR: '1', CI: '1' },
    stdout,
    stderr,
    stdin: Readable.from([]),
    interactive: false,
  });
  await checkHints(stdout.buf, stderr.buf);
  return { code, stdout: stdout.buf, stderr: stderr.buf };
}

// [what, argv (image paths filled in), the option named]
const rejected: [string, () => string[], string][] = [
  ['strength above 100', () => ['relight', image, '--light-transfer-strength', '101'], '--light-transfer-strength'],
  ['strength below 0', () => ['relight', image, '--light-transfer-strength', '-1'], '--light-transfer-strength'],
  [
    'strength not an integer',
    () => ['relight', image, '--light-transfer-strength', '50.5'],
    '--light-transfer-strength',
  ],
  ['strength not a number', () => ['relight', image, '--light-transfer-strength', 'lots'], '--light-transfer-strength'],
  ['whites above 100', () => ['relight', image, '--whites', '101'], '--whites'],
  ['blacks below 0', () => ['relight', image, '--blacks', '-1'], '--blacks'],
  ['brightness above 100', () => ['relight', image, '--brightness', '101'], '--brightness'],
  ['contrast not an integer', () => ['relight', image, '--contrast', '0.5'], '--contrast'],
  ['saturation above 100', () => ['relight', image, '--saturation', '101'], '--saturation'],
  ['style not in its enum', () => ['relight', image, '--style', 'neon'], '--style'],
  ['engine not in its enum', () => ['relight', image, '--engine', 'turbo'], '--engine'],
  ['transfer light a not in its enum', () => ['relight', image, '--transfer-light-a', 'extreme'], '--transfer-light-a'],
  ['transfer light b not in its enum', () => ['relight', image, '--transfer-light-b', 'wobble'], '--transfer-light-b'],
  ['prompt weight above 1.4', () => ['relight', image, '--prompt', 'a (warm light:1.41) room'], '--prompt'],
  ['prompt weight below 1', () => ['relight', image, '--prompt', '(warm light:0.99)'], '--prompt'],
  ['prompt weight malformed', () => ['relight', image, '--prompt', '(warm light:high)'], '--prompt'],
  [
    'both light sources',
    () => ['relight', image, '--reference-image', image, '--lightmap', image],
    '--transfer-light-from-reference-image',
  ],
  ['webhook URL not http(s)', () => ['relight', image, '--webhook-url', 'ftp://127.0.0.1/hook'], '--webhook-url'],
  ['webhook URL not absolute', () => ['relight', image, '--webhook-url', '/hook'], '--webhook-url'],
  ['image file missing', () => ['relight', join(dir, 'missing.png')], '<image>'],
  ['image file empty', () => ['relight', empty], '<image>'],
  [
    'reference image missing',
    () => ['relight', image, '--transfer-light-from-reference-image', join(dir, 'nope.png')],
    '--transfer-light-from-reference-image',
  ],
  ['a bad --timeout', () => ['relight', image, '--wait', '--timeout', 'forever'], '--timeout'],
  ['sharpen above 100', () => ['skin-enhance', image, '--sharpen', '101'], '--sharpen'],
  ['smart grain below 0', () => ['skin-enhance', image, '--smart-grain', '-1'], '--smart-grain'],
  ['optimized for not in its enum', () => ['skin-enhance', image, '--optimized-for', 'glow'], '--optimized-for'],
  ['skin webhook not a URL', () => ['skin-enhance', image, '--webhook-url', 'hook'], '--webhook-url'],
  ['no model', () => ['video-extend'], '--model'],
  ['model not in its enum', () => ['video-extend', '--model', 'vidq3'], '--model'],
  ['duration 0', () => ['video-extend', '--model', 'vidq2-pro', '--duration', '0'], '--duration'],
  ['duration 8', () => ['video-extend', '--model', 'vidq2-pro', '--duration', '8'], '--duration'],
  ['duration not an integer', () => ['video-extend', '--model', 'vidq2-pro', '--duration', '1.5'], '--duration'],
  ['resolution not in its enum', () => ['video-extend', '--model', 'vidq2-pro', '--resolution', '4k'], '--resolution'],
  [
    'prompt over 2000 characters',
    () => ['video-extend', '--model', 'vidq2-pro', '--prompt', 'x'.repeat(2001)],
    '--prompt',
  ],
  [
    'payload over 1048576 characters',
    () => ['video-extend', '--model', 'vidq2-pro', '--payload-file', payloadOver],
    '--payload-file',
  ],
  [
    'payload and payload file',
    () => ['video-extend', '--model', 'vidq2-pro', '--payload', 'a', '--payload-file', payloadEdge],
    '--payload',
  ],
  [
    'video URL without creation id',
    () => ['video-extend', '--model', 'vidq2-pro', '--video-url', 'https://127.0.0.1/v.mp4'],
    '--video-creation-id',
  ],
  [
    'creation id without video URL',
    () => ['video-extend', '--model', 'vidq2-pro', '--video-creation-id', 'c-1'],
    '--video-url',
  ],
  [
    'callback URL not http(s)',
    () => ['video-extend', '--model', 'vidq2-pro', '--callback-url', 'mailto:a@b.c'],
    '--callback-url',
  ],
  ['task kind unknown', () => ['task', 'status', 'upscale', 'some-id'], 'upscale'],
];

describe('invalid values exit 2 before any request, naming the option', () => {
  it.each(rejected)('%s', async (_, argv, flag) => {
    const result = await cli(argv());
    expect(result.code, result.stderr).toBe(2);
    expect(result.stderr).toContain(flag);
    expect(result.stderr).not.toMatch(/cannot reach/);
  });

  it('sends nothing at all: a recording registry sees no request', async () => {
    for (const [, argv] of rejected.slice(0, 12)) {
      expect((await cli(argv(), recorder.url)).code).toBe(2);
    }
    expect(recorder.requests).toEqual([]);
  });

  it('says "must be a number" for an option that is not one', async () => {
    const result = await cli(['relight', image, '--whites', 'bright']);
    expect(result.stderr).toContain('--whites (advanced_settings.whites): must be a number');
  });

  it('--json reports the error as one JSON document', async () => {
    const result = await cli(['--json', 'skin-enhance', image, '--sharpen', '101']);
    expect(result.code).toBe(2);
    expect(JSON.parse(result.stdout)).toMatchObject({
      error: { code: 'invalid_input', message: expect.stringContaining('--sharpen') },
    });
  });
});

// The edge of each rule passes the local checks: the command goes on to send (and, with nothing
// listening, fails with exit 1 naming the URL).
const accepted: [string, () => string[]][] = [
  ['strength 0', () => ['relight', image, '--light-transfer-strength', '0']],
  ['strength 100', () => ['relight', image, '--light-transfer-strength', '100']],
  [
    'levels 0 and 100',
    () => [
      'relight',
      image,
      '--whites',
      '0',
      '--blacks',
      '100',
      '--brightness',
      '0',
      '--contrast',
      '100',
      '--saturation',
      '0',
    ],
  ],
  ['prompt weights 1 and 1.4', () => ['relight', image, '--prompt', '(soft:1) and (warm light:1.4), (plain) text']],
  [
    'one light source, by alias',
    () => ['relight', 'https://127.0.0.1/p.png', '--lightmap', image, '--no-change-background', '--fixed-generation'],
  ],
  ['sharpen 100, smart grain 0', () => ['skin-enhance', image, '--sharpen', '100', '--smart-grain', '0']],
  ['duration 1', () => ['video-extend', '--model', 'vidq2-turbo', '--duration', '1']],
  ['duration 7, 1080p', () => ['video-extend', '--model', 'vidq2-pro', '--duration', '7', '--resolution', '1080p']],
  ['prompt of 2000 characters', () => ['video-extend', '--model', 'vidq2-pro', '--prompt', 'x'.repeat(2000)]],
  ['payload of 1048576 characters', () => ['video-extend', '--model', 'vidq2-pro', '--payload-file', payloadEdge]],
  [
    'video URL with creation id, one image',
    () => [
      'video-extend',
      '--model',
      'vidq2-pro',
      '--video-url',
      'https://127.0.0.1/v.mp4',
      '--video-creation-id',
      'c-1',
      '--image',
      image,
    ],
  ],
];

describe('the edges pass the local checks', () => {
  it.each(accepted)('%s', async (_, argv) => {
    const result = await cli(argv());
    expect(result.code, result.stderr).toBe(1);
    expect(result.stderr).toMatch(/cannot reach http:\/\/127\.0\.0\.1:\d+\/proxy\//);
  });
});

describe('serve flags of the AI proxy', () => {
  it('maps flags and env to proxy options', () => {
    expect(
      proxyOptionsFromFlags(
        {
          imgUpstream: 'https://img.provider.test/api',
          vidUpstream: 'http://127.0.0.1:9',
          imgUpstreamKeyHeader: 'X-Api-Key',
          upstreamTimeout: '2s',
          sandboxDelay: '250',
          callbackTimeout: '1500ms',
          callbackBackoff: '1m',
          callbackAllow: '127.0.0.0/8, hooks.example.test',
        },
        { NODEREG_IMG_API_KEY: 'ik', NODEREG_VID_API_KEY: 'vk' },
      ),
    ).toEqual({
      imgUpstream: 'https://img.provider.test/api',
      vidUpstream: 'http://127.0.0.1:9',
      imgKey: 'ik',
      vidKey: 'vk',
      imgKeyHeader: 'X-Api-Key',
      vidKeyHeader: undefined,
      upstreamTimeout: 2000,
      sandboxDelay: 250,
      callbackTimeout: 1500,
      callbackBackoff: 60_000,
      callbackAllow: ['127.0.0.0/8', 'hooks.example.test'],
    });
  });
  it.each([
    [{ imgUpstream: 'ftp://x' }, '--img-upstream'],
    [{ vidUpstream: 'not a url' }, '--vid-upstream'],
    [{ imgUpstreamKeyHeader: 'X Api Key' }, '--img-upstream-key-header'],
    [{ upstreamTimeout: 'soon' }, '--upstream-timeout'],
    [{ sandboxDelay: '-5' }, '--sandbox-delay'],
    [{ callbackTimeout: '' }, '--callback-timeout'],
    [{ callbackBackoff: '1w' }, '--callback-backoff'],
    [{ callbackAllow: '10.0.0.0/99' }, '--callback-allow'],
    [{ callbackAllow: ' , ' }, '--callback-allow'],
    // fetch refuses such a URL, and its error (with the password) went to every caller in the 502
    [{ imgUpstream: 'https://user:s3cret@img.provider.test' }, '--img-upstream'],
    [{ vidUpstream: 'https://key@vid.provider.test' }, '--vid-upstream'],
  ])('%j is exit 2 naming %s', (flags, flag) => {
    expect(() => proxyOptionsFromFlags(flags, {})).toThrow(
      expect.objectContaining({ exitCode: 2, message: expect.stringContaining(flag) }),
    );
    expect(() => proxyOptionsFromFlags(flags, {})).toThrow(
      expect.objectContaining({ message: expect.not.stringContaining('s3cret') }),
    );
  });
});
