// User flows of the AI proxy commands: the CLI in-process (spawned to stop it with a signal), against a real registry in
// sandbox mode (and once in forward mode against a stand-in provider). Run `npx tsc -p .` first.
import { spawn } from 'node:child_process';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runInProcess } from '../cli/in-process.js';
import { BIN, cliEnv, INSTALLED_BIN, PNG, startServer, tempDir, type TestServer } from '../helpers.js';
import { checkHints } from '../cli/hint-check.js';
import { startStandIn, type StandIn } from './stand-ins.js';

async function createUser(server: TestServer, name: string): Promise<string> {
  const response = await fetch(`${server.url}/users`, {
    method: 'POST',
    headers: { authorization: `Bearer ${server.adminToken}`, 'content-type': 'application/json' },
    body: JSON.stringify({ name }),
  });
  expect(response.status).toBe(201);
  return ((await response.json()) as { token: string }).token;
}

describe('sandbox', () => {
  let server: TestServer;
  let token: string;
  let dir: string;
  let image: string;
  const env = () => ({ NODEREG_REGISTRY: server.url, NODEREG_TOKEN: token });

  beforeAll(async () => {
    server = await startServer({ proxy: { sandboxDelay: 300 } });
    token = await createUser(server, 'alice');
    dir = tempDir('nodereg-e2e-proxy-');
    image = join(dir, 'photo.png');
    writeFileSync(image, PNG);
  });
  afterAll(() => server.close());

  it('relight <file> --output out.png writes the result, identical to the input image', async () => {
    const out = join(dir, 'out.png');
    const result = await runInProcess(['relight', image, '--prompt', 'warm (sunset:1.2) light', '--output', out], {
      env: env(),
    });
    expect(result.code, result.stderr).toBe(0);
    expect(readFileSync(out).equals(PNG)).toBe(true);
    expect(result.stdout.trim()).toBe(out);
    expect(result.stderr).toMatch(/relight task [\w-]+: COMPLETED/);
  });

  it('relight --output - writes the result bytes alone to stdout, the summary to stderr; refused with --json', async () => {
    const result = await runInProcess(['relight', image, '--prompt', 'warm light', '--output', '-'], {
      env: env(),
      cwd: dir,
    });
    expect(result.code, result.stderr).toBe(0);
    expect(result.stdoutBytes.equals(PNG)).toBe(true);
    expect(result.stderr).toMatch(/relight task [\w-]+: wrote the result to stdout/);
    expect(existsSync(join(dir, '-'))).toBe(false);
    const json = await runInProcess(['relight', image, '--prompt', 'warm light', '--output', '-', '--json'], {
      env: env(),
      cwd: dir,
    });
    expect(json.code).toBe(2);
    expect(JSON.parse(json.stdout).error.message).toContain(
      '--output - writes the result to stdout, where --json writes its document',
    );
  });

  it('node download --out - and pack --out - are refused naming the flag, no file named -', async () => {
    for (const args of [
      ['node', 'download', 'some-node', '--out', '-'],
      ['pack', '--out', '-'],
    ]) {
      const result = await runInProcess(args, { env: env(), cwd: dir });
      expect(result.code, result.stderr).toBe(2);
      expect(result.stderr).toContain('--out - (stdout) is not supported');
      expect(existsSync(join(dir, '-'))).toBe(false);
    }
  });

  it('without --wait prints the task id; task status --output DIR downloads it later', async () => {
    const started = await runInProcess(['skin-enhance', image, '--sharpen', '10'], { env: env() });
    expect(started.code, started.stderr).toBe(0);
    const id = started.stdout.trim();
    expect(id).toMatch(/^[0-9a-f-]{36}$/);
    expect(started.stderr).toContain(`nodereg task status skin-enhancer ${id} --wait`);
    const outDir = join(dir, 'results');
    const fetched = await runInProcess(['task', 'status', 'skin-enhancer', id, '--output', `${outDir}/`], {
      env: env(),
    });
    expect(fetched.code, fetched.stderr).toBe(0);
    expect(readFileSync(join(outDir, `skin-enhancer-${id}.png`)).equals(PNG)).toBe(true);
  });

  it('video-extend --wait --json prints the final state with its credits', async () => {
    const result = await runInProcess(
      ['video-extend', '--model', 'vidq2-pro', '--duration', '2', '--resolution', '540p', '--wait', '--json'],
      { env: env() },
    );
    expect(result.code, result.stderr).toBe(0);
    const final = JSON.parse(result.stdout);
    expect(final).toMatchObject({
      state: 'success',
      credits: 40,
      creations: [{ id: expect.any(String), url: expect.stringContaining('/proxy/results/') }],
    });
  });

  it('video-extend --json does not echo the image, the video or the payload it sent', async () => {
    const frame = join(dir, 'frame.png');
    writeFileSync(frame, Buffer.concat([PNG, Buffer.alloc(300_000, 7)]));
    const clip = join(dir, 'clip.mp4');
    writeFileSync(clip, Buffer.alloc(200_000, 9));
    const payload = JSON.stringify({ notes: 'p'.repeat(100_000) });
    const result = await runInProcess(
      [
        'video-extend',
        '--model',
        'vidq2-turbo',
        '--image',
        frame,
        '--video-url',
        clip,
        '--video-creation-id',
        'c-1',
        '--payload',
        payload,
        '--prompt',
        'pan',
        '--json',
      ],
      { env: env() },
    );
    expect(result.code, result.stderr).toBe(0);
    expect(result.stdout.length).toBeLessThan(2_000);
    const answer = JSON.parse(result.stdout);
    expect(answer).toMatchObject({
      state: 'created',
      model: 'vidq2-turbo',
      prompt: 'pan',
      video_creation_id: 'c-1',
      task_id: expect.any(String),
    });
    expect(answer).not.toHaveProperty('images');
    expect(answer).not.toHaveProperty('video_url');
    expect(answer).not.toHaveProperty('payload');
  });

  it('a task of another user is not found (exit 5)', async () => {
    const started = await runInProcess(['relight', image], { env: env() });
    const other = await createUser(server, 'bob');
    const result = await runInProcess(['task', 'status', 'relight', started.stdout.trim()], {
      env: { ...env(), NODEREG_TOKEN: other },
    });
    expect(result.code).toBe(5);
  });

  it('a server-side rule (callback host not allowed) exits 2', async () => {
    const result = await runInProcess(['relight', image, '--webhook-url', 'https://example.com/hook'], { env: env() });
    expect(result.code).toBe(2);
    expect(result.stderr).toMatch(/webhook_url.*not allowed/);
  });
});

describe('waiting', () => {
  let server: TestServer;
  let token: string;
  let image: string;

  beforeAll(async () => {
    server = await startServer({ proxy: { sandboxDelay: 600_000 } });
    token = await createUser(server, 'alice');
    image = join(tempDir('nodereg-e2e-wait-'), 'photo.png');
    writeFileSync(image, PNG);
  });
  afterAll(() => server.close());

  it('Ctrl-C stops waiting, leaves the task running, prints its id and exits 130', async () => {
    const child = spawn(process.execPath, [INSTALLED_BIN, 'relight', image, '--wait'], {
      env: { ...cliEnv(tempDir('nodereg-home-')), NODEREG_REGISTRY: server.url, NODEREG_TOKEN: token },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stderr = '';
    child.stderr.on('data', (chunk) => (stderr += chunk));
    const closed = new Promise<number | null>((resolve) => child.on('close', resolve));
    // interrupt once it is waiting (it has said which task it waits for)
    for (let i = 0; i < 500 && !/: CREATED/.test(stderr); i++) await new Promise((resolve) => setTimeout(resolve, 20));
    child.kill('SIGINT');
    expect(await closed).toBe(130);
    await checkHints('', stderr);
    const id = /relight task ([0-9a-f-]{36})/.exec(stderr)?.[1];
    expect(id).toBeDefined();
    expect(stderr).toContain(`nodereg task status relight ${id} --wait`);
    const status = await fetch(`${server.url}/proxy/img/v1/ai/image-relight/${id}`, {
      headers: { authorization: `Bearer ${token}` },
    });
    expect(((await status.json()) as { data: { status: string } }).data.status).toBe('CREATED');
  });

  it('--timeout gives up waiting with exit 1, the task still running', async () => {
    const result = await runInProcess(['relight', image, '--wait', '--timeout', '1s'], {
      env: { NODEREG_REGISTRY: server.url, NODEREG_TOKEN: token },
    });
    expect(result.code).toBe(1);
    expect(result.stderr).toMatch(/still CREATED after the --timeout/);
  });
});

describe('submitting', () => {
  it('the submission waits for the registry as long as --timeout (not the 30 s of other requests)', async () => {
    // The registry waits --upstream-timeout (default 30 s) for the provider: a CLI that gave up at 30 s
    // never saw the id of a task the provider then started. Shown here the fast way round.
    const slow = await startStandIn(async () => {
      await new Promise((resolve) => setTimeout(resolve, 3_000));
      return { status: 200, json: { data: { task_id: 't-1', status: 'CREATED', generated: [] } } };
    });
    try {
      const image = join(tempDir('nodereg-e2e-submit-'), 'photo.png');
      writeFileSync(image, PNG);
      const env = { NODEREG_REGISTRY: slow.url, NODEREG_TOKEN: 'nrg_u_test' };
      const started = Date.now();
      const short = await runInProcess(['relight', image, '--timeout', '1s'], { env });
      expect(short.code).toBe(1);
      expect(short.stderr).toContain('no answer in time');
      expect(Date.now() - started).toBeLessThan(2_900);
      const long = await runInProcess(['relight', image, '--timeout', '10s'], { env });
      expect(long.code, long.stderr).toBe(0);
      expect(long.stdout.trim()).toBe('t-1');
    } finally {
      await slow.close();
    }
  });
});

describe('forward mode: every flag reaches the provider as its field', () => {
  let upstream: StandIn;
  let server: TestServer;
  let token: string;
  let dir: string;

  beforeAll(async () => {
    upstream = await startStandIn((r) =>
      r.method === 'POST'
        ? {
            status: 200,
            json: r.path.endsWith('/extend')
              ? { task_id: 'p-v', state: 'created', credits: 1 }
              : { data: { task_id: 'p-1', generated: [] } },
          }
        : { status: 404, json: {} },
    );
    server = await startServer({ proxy: { imgUpstream: upstream.url, vidUpstream: upstream.url } });
    token = await createUser(server, 'alice');
    dir = tempDir('nodereg-e2e-forward-');
    writeFileSync(join(dir, 'photo.png'), PNG);
    writeFileSync(join(dir, 'light.png'), Buffer.from('light'));
    writeFileSync(join(dir, 'payload.json'), '{"seed": 7}');
  });
  afterAll(async () => {
    await server.close();
    await upstream.close();
  });
  // tasks with a callback are then polled (GET): the submission is the last POST
  const lastPost = () => upstream.requests.filter((r) => r.method === 'POST').at(-1)!.json;

  it('relight', async () => {
    const result = await runInProcess(
      [
        'relight',
        join(dir, 'photo.png'),
        '--prompt',
        'soft (rim light:1.3)',
        '--light-transfer-strength',
        '40',
        '--style',
        'smooth',
        '--reference-image',
        join(dir, 'light.png'),
        '--no-change-background',
        '--interpolate-from-original',
        '--no-preserve-details',
        '--engine',
        'real',
        '--transfer-light-a',
        'high',
        '--transfer-light-b',
        'soft_mid',
        '--whites',
        '1',
        '--blacks',
        '2',
        '--brightness',
        '3',
        '--contrast',
        '4',
        '--saturation',
        '5',
        '--fixed-generation',
        '--webhook-url',
        'http://127.0.0.1:9/hook',
      ],
      { env: { NODEREG_REGISTRY: server.url, NODEREG_TOKEN: token } },
    );
    expect(result.code, result.stderr).toBe(0);
    expect(lastPost()).toEqual({
      image: PNG.toString('base64'),
      prompt: 'soft (rim light:1.3)',
      light_transfer_strength: 40,
      style: 'smooth',
      transfer_light_from_reference_image: Buffer.from('light').toString('base64'),
      change_background: false,
      interpolate_from_original: true,
      preserve_details: false,
      advanced_settings: {
        engine: 'real',
        transfer_light_a: 'high',
        transfer_light_b: 'soft_mid',
        whites: 1,
        blacks: 2,
        brightness: 3,
        contrast: 4,
        saturation: 5,
        fixed_generation: true,
      },
    });
  });

  it('skin-enhance and video-extend', async () => {
    const env = { NODEREG_REGISTRY: server.url, NODEREG_TOKEN: token };
    const skin = await runInProcess(
      [
        'skin-enhance',
        'https://127.0.0.1/face.png',
        '--optimized-for',
        'transform_to_real',
        '--sharpen',
        '9',
        '--smart-grain',
        '8',
      ],
      { env },
    );
    expect(skin.code, skin.stderr).toBe(0);
    expect(lastPost()).toEqual({
      image: 'https://127.0.0.1/face.png',
      optimized_for: 'transform_to_real',
      sharpen: 9,
      smart_grain: 8,
    });
    const video = await runInProcess(
      [
        'video-extend',
        '--model',
        'vidq2-turbo',
        '--video-url',
        'https://127.0.0.1/v.mp4',
        '--video-creation-id',
        'c-9',
        '--image',
        join(dir, 'photo.png'),
        '--prompt',
        'pan',
        '--duration',
        '6',
        '--resolution',
        '540p',
        '--payload-file',
        join(dir, 'payload.json'),
        '--callback-url',
        'http://127.0.0.1:9/cb',
      ],
      { env },
    );
    expect(video.code, video.stderr).toBe(0);
    expect(lastPost()).toEqual({
      model: 'vidq2-turbo',
      video_url: 'https://127.0.0.1/v.mp4',
      video_creation_id: 'c-9',
      images: [PNG.toString('base64')],
      prompt: 'pan',
      duration: 6,
      resolution: '540p',
      payload: '{"seed": 7}',
    });
  });
});

describe('nodereg serve with the proxy flags', () => {
  /** Spawns `nodereg serve ARGS` and resolves with its URL once the listening line is out. */
  async function serve(args: string[], env: Record<string, string>) {
    const home = tempDir('nodereg-home-');
    const child = spawn(process.execPath, [BIN, 'serve', '--port', '0', '--log', 'off', ...args], {
      env: {
        PATH: process.env.PATH ?? '',
        HOME: home,
        XDG_CONFIG_HOME: join(home, '.config'),
        XDG_DATA_HOME: join(home, '.local/share'),
        NO_COLOR: '1',
        CI: '1',
        ...env,
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stderr.on('data', (chunk) => (stderr += chunk));
    const closed = new Promise<number | null>((resolve) => child.on('close', resolve));
    const url = await new Promise<string>((resolve, reject) => {
      child.stdout.on('data', (chunk) => {
        stdout += chunk;
        const match = /listening on (http:\/\/\S+)\n/.exec(stdout);
        if (match) resolve(match[1]);
      });
      closed.then((code) => reject(new Error(`serve exited ${code}: ${stderr}`)));
    });
    return { url, stderr: () => stderr, stop: () => (child.kill('SIGTERM'), closed) };
  }

  it('--sandbox-delay and --callback-allow take effect; the proxy mode is announced', async () => {
    const admin = 'nrg_u_e2e_proxy_admin_token_0123456789abcdef';
    const dataDir = tempDir('nodereg-serve-proxy-');
    const served = await serve(
      ['--data-dir', dataDir, '--sandbox-delay', '100', '--callback-allow', 'hooks.example.test'],
      { NODEREG_ADMIN_TOKEN: admin },
    );
    try {
      expect(served.stderr()).toMatch(/AI proxy, relight and skin enhancer: sandbox/);
      const image = join(dataDir, '..', 'in.png');
      writeFileSync(image, PNG);
      const env = { NODEREG_REGISTRY: served.url, NODEREG_TOKEN: admin };
      const out = join(tempDir('nodereg-out-'), 'out.png');
      const done = await runInProcess(['relight', image, '--output', out], { env });
      expect(done.code, done.stderr).toBe(0);
      expect(readFileSync(out).equals(PNG)).toBe(true);
      const refused = await runInProcess(['relight', image, '--webhook-url', 'http://127.0.0.1:9/hook'], { env });
      expect(refused.code).toBe(2);
      expect(refused.stderr).toMatch(/not allowed/);
    } finally {
      expect(await served.stop()).toBe(0);
    }
  });

  it('--img-upstream with its key header forwards with the key from NODEREG_IMG_API_KEY', async () => {
    const provider = await startStandIn(() => ({ status: 200, json: { data: { task_id: 'p-1', generated: [] } } }));
    const admin = 'nrg_u_e2e_proxy_admin_token_fedcba9876543210';
    const served = await serve(
      [
        '--data-dir',
        tempDir('nodereg-serve-fwd-'),
        '--img-upstream',
        provider.url,
        '--img-upstream-key-header',
        'X-Provider-Key',
      ],
      {
        NODEREG_ADMIN_TOKEN: admin,
        NODEREG_IMG_API_KEY: 'key-from-env',
      },
    );
    try {
      expect(served.stderr()).toContain(`AI proxy, relight and skin enhancer: forwarding to ${provider.url}`);
      const result = await runInProcess(['skin-enhance', 'https://127.0.0.1/face.png'], {
        env: { NODEREG_REGISTRY: served.url, NODEREG_TOKEN: admin },
      });
      expect(result.code, result.stderr).toBe(0);
      expect(provider.requests[0].headers['x-provider-key']).toBe('key-from-env');
      expect(JSON.stringify(provider.requests[0].headers)).not.toContain(admin);
    } finally {
      await served.stop();
      await provider.close();
    }
  });

  it('a bad proxy flag exits 2 naming it, before starting', async () => {
    const result = await runInProcess([
      'serve',
      '--port',
      '0',
      '--data-dir',
      tempDir('nodereg-serve-bad-'),
      '--img-upstream',
      'ftp://127.0.0.1/',
    ]);
    expect(result.code).toBe(2);
    expect(result.stderr).toContain('--img-upstream');
    expect(result.stdout).toBe('');
  });
});
