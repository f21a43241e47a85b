// Every rule of the spec's Limits table and field tables (spec/interface.md) and of DESIGN.md §4,
// checked on the request schemas of src/contract/proxy.ts. Expected values are written out here,
// from the documents, and never read back from src/contract/limits.ts, so a drift fails.
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import {
  RelightBody,
  SkinEnhancerBody,
  VideoExtendBody,
  promptWeightProblem,
  videoCredits,
} from '../../src/contract/proxy.js';

type Schema = z.ZodType;

const RELIGHT_BASE = { image: 'aGVsbG8gd29ybGQ=' };
const SKIN_BASE = { image: 'https://127.0.0.1/face.png' };
const VIDEO_BASE = { model: 'vidq2-pro' };

/** The issue paths of a failed parse, each joined with dots; [] when the value was accepted. */
function issuePaths(schema: Schema, value: unknown): string[] {
  const result = schema.safeParse(value);
  return result.success ? [] : result.error.issues.map((issue) => issue.path.map(String).join('.'));
}

function expectAccepted(schema: Schema, value: unknown): void {
  const result = schema.safeParse(value);
  expect(result.success ? [] : result.error.issues, JSON.stringify(value).slice(0, 200)).toEqual([]);
}

function expectRejectedAt(schema: Schema, value: unknown, path: string): void {
  const result = schema.safeParse(value);
  expect(result.success, `${JSON.stringify(value).slice(0, 200)} should be rejected`).toBe(false);
  expect(issuePaths(schema, value)).toContain(path);
}

/** Builds a body with `value` at a dotted path on top of `base`. */
function withField(base: Record<string, unknown>, path: string, value: unknown): Record<string, unknown> {
  const [head, ...rest] = path.split('.');
  if (rest.length === 0) return { ...base, [head]: value };
  return { ...base, [head]: withField((base[head] as Record<string, unknown>) ?? {}, rest.join('.'), value) };
}

// ---------------------------------------------------------------------------------------------
// Integer ranges

const percentFields: { schema: Schema; name: string; base: Record<string, unknown>; path: string }[] = [
  { schema: RelightBody, name: 'RelightBody', base: RELIGHT_BASE, path: 'light_transfer_strength' },
  { schema: SkinEnhancerBody, name: 'SkinEnhancerBody', base: SKIN_BASE, path: 'sharpen' },
  { schema: SkinEnhancerBody, name: 'SkinEnhancerBody', base: SKIN_BASE, path: 'smart_grain' },
  ...['whites', 'blacks', 'brightness', 'contrast', 'saturation'].map((sub) => ({
    schema: RelightBody as Schema,
    name: 'RelightBody',
    base: RELIGHT_BASE,
    path: `advanced_settings.${sub}`,
  })),
];

describe.each(percentFields)('$name $path: integer 0–100', ({ schema, base, path }) => {
  it.each([0, 1, 50, 99, 100])('accepts %s and keeps it', (value) => {
    const result = schema.safeParse(withField(base, path, value));
    expect(result.success).toBe(true);
    const parsed = path.split('.').reduce<unknown>((o, k) => (o as Record<string, unknown>)[k], result.data);
    expect(parsed).toBe(value);
  });
  it.each([-1, 101, -100, 1000, 50.5, 0.1, 99.99, Number.NaN, Number.POSITIVE_INFINITY, Number.NEGATIVE_INFINITY])(
    'rejects %s with the issue on the field',
    (value) => expectRejectedAt(schema, withField(base, path, value), path),
  );
  it.each(['50', null, true, [50]])('rejects the non-number %j', (value) => {
    expectRejectedAt(schema, withField(base, path, value), path);
  });
});

describe('VideoExtendBody duration: integer 1–7 seconds', () => {
  it.each([1, 2, 5, 7])('accepts %s', (duration) => {
    expect(VideoExtendBody.parse({ ...VIDEO_BASE, duration }).duration).toBe(duration);
  });
  it.each([0, 8, -1, 100, 5.5, 1.01, 6.999, Number.NaN, Number.POSITIVE_INFINITY])(
    'rejects %s on duration',
    (duration) => {
      expectRejectedAt(VideoExtendBody, { ...VIDEO_BASE, duration }, 'duration');
    },
  );
  it('rejects "5" (a string)', () => expectRejectedAt(VideoExtendBody, { ...VIDEO_BASE, duration: '5' }, 'duration'));
});

// ---------------------------------------------------------------------------------------------
// Enums: every listed value accepted, near misses rejected, and no value outside the list

const enums: { schema: Schema; base: Record<string, unknown>; path: string; values: string[] }[] = [
  {
    schema: RelightBody,
    base: RELIGHT_BASE,
    path: 'style',
    values: ['standard', 'darker_but_realistic', 'clean', 'smooth', 'brighter', 'contrasted_n_hdr', 'just_composition'],
  },
  {
    schema: RelightBody,
    base: RELIGHT_BASE,
    path: 'advanced_settings.engine',
    values: ['automatic', 'balanced', 'cool', 'real', 'illusio', 'fairy', 'colorful_anime', 'hard_transform', 'softy'],
  },
  {
    schema: RelightBody,
    base: RELIGHT_BASE,
    path: 'advanced_settings.transfer_light_a',
    values: ['automatic', 'low', 'medium', 'normal', 'high', 'high_on_faces'],
  },
  {
    schema: RelightBody,
    base: RELIGHT_BASE,
    path: 'advanced_settings.transfer_light_b',
    values: [
      'automatic',
      'composition',
      'straight',
      'smooth_in',
      'smooth_out',
      'smooth_both',
      'reverse_both',
      'soft_in',
      'soft_out',
      'soft_mid',
      'strong_mid',
      'style_shift',
      'strong_shift',
    ],
  },
  {
    schema: SkinEnhancerBody,
    base: SKIN_BASE,
    path: 'optimized_for',
    values: ['enhance_skin', 'improve_lighting', 'enhance_everything', 'transform_to_real', 'no_make_up'],
  },
  { schema: VideoExtendBody, base: VIDEO_BASE, path: 'model', values: ['vidq2-pro', 'vidq2-turbo'] },
  { schema: VideoExtendBody, base: VIDEO_BASE, path: 'resolution', values: ['540p', '720p', '1080p'] },
];

function nearMisses(value: string, all: string[]): string[] {
  const candidates = [
    value.toUpperCase(),
    value[0].toUpperCase() + value.slice(1),
    `${value} `,
    ` ${value}`,
    `${value}x`,
    value.slice(0, -1),
    value.replace(/_/g, '-'),
    value.replace(/-/g, '_'),
    '',
  ];
  return [...new Set(candidates)].filter((c) => !all.includes(c));
}

/** The enum of a (possibly nested) field, as the JSON Schema of the input shows it. */
function enumOf(schema: Schema, path: string): unknown {
  let node = z.toJSONSchema(schema, { io: 'input', unrepresentable: 'any' }) as Record<string, unknown>;
  for (const key of path.split('.')) {
    node = (node.properties as Record<string, Record<string, unknown>>)[key];
    // an optional object may be wrapped in anyOf
    if (!node.properties && !node.enum && Array.isArray(node.anyOf)) {
      node = (node.anyOf as Record<string, unknown>[]).find((n) => n.properties || n.enum) ?? node;
    }
  }
  return node.enum;
}

describe.each(enums)('enum $path', ({ schema, base, path, values }) => {
  it.each(values)('accepts %s', (value) => {
    const result = schema.safeParse(withField(base, path, value));
    expect(result.success).toBe(true);
    const parsed = path.split('.').reduce<unknown>((o, k) => (o as Record<string, unknown>)[k], result.data);
    expect(parsed).toBe(value);
  });
  it.each(values.flatMap((v) => nearMisses(v, values)))('rejects the near miss %j on the field', (value) => {
    expectRejectedAt(schema, withField(base, path, value), path);
  });
  it.each([null, 1, ['x']])('rejects the non-string %j', (value) => {
    expectRejectedAt(schema, withField(base, path, value), path);
  });
  it('lists exactly the values of the spec', () => {
    expect([...(enumOf(schema, path) as string[])].sort()).toEqual([...values].sort());
  });
});

// ---------------------------------------------------------------------------------------------
// Video extend: images, lengths, pairs, callback

describe('VideoExtendBody', () => {
  it('requires model', () => expectRejectedAt(VideoExtendBody, {}, 'model'));

  it('accepts exactly one image', () => {
    expect(VideoExtendBody.parse({ ...VIDEO_BASE, images: ['aGk='] }).images).toEqual(['aGk=']);
  });
  it.each([[[]], [['a', 'b']], [['a', 'b', 'c']]])('rejects images %j', (images) => {
    expectRejectedAt(VideoExtendBody, { ...VIDEO_BASE, images }, 'images');
  });
  it('rejects an empty image string', () => {
    expect(VideoExtendBody.safeParse({ ...VIDEO_BASE, images: [''] }).success).toBe(false);
  });
  it('rejects images given as a single string', () => {
    expectRejectedAt(VideoExtendBody, { ...VIDEO_BASE, images: 'aGk=' }, 'images');
  });

  it('accepts a prompt of 2000 characters and rejects 2001', () => {
    expectAccepted(VideoExtendBody, { ...VIDEO_BASE, prompt: 'p'.repeat(2000) });
    expectAccepted(VideoExtendBody, { ...VIDEO_BASE, prompt: '' });
    expectRejectedAt(VideoExtendBody, { ...VIDEO_BASE, prompt: 'p'.repeat(2001) }, 'prompt');
  });

  it('accepts a payload of 1048576 characters and rejects 1048577', () => {
    expectAccepted(VideoExtendBody, { ...VIDEO_BASE, payload: 'x'.repeat(1_048_576) });
    expectRejectedAt(VideoExtendBody, { ...VIDEO_BASE, payload: 'x'.repeat(1_048_577) }, 'payload');
  });

  it('accepts video_creation_id together with video_url, and neither', () => {
    expectAccepted(VideoExtendBody, { ...VIDEO_BASE, video_creation_id: 'c-1', video_url: 'https://127.0.0.1/v.mp4' });
    const parsed = VideoExtendBody.parse(VIDEO_BASE);
    expect(parsed.video_creation_id).toBeUndefined();
    expect(parsed.video_url).toBeUndefined();
  });
  it('rejects video_creation_id without video_url, naming video_url', () => {
    const paths = issuePaths(VideoExtendBody, { ...VIDEO_BASE, video_creation_id: 'c-1' });
    expect(paths).toEqual(['video_url']);
  });
  it('rejects video_url without video_creation_id, naming video_creation_id', () => {
    const paths = issuePaths(VideoExtendBody, { ...VIDEO_BASE, video_url: 'https://127.0.0.1/v.mp4' });
    expect(paths).toEqual(['video_creation_id']);
  });
  it('rejects empty strings for the pair', () => {
    expect(VideoExtendBody.safeParse({ ...VIDEO_BASE, video_creation_id: '', video_url: '' }).success).toBe(false);
  });
});

// ---------------------------------------------------------------------------------------------
// Callback URLs: absolute http(s)

const goodUrls = [
  'http://127.0.0.1:8080/hook',
  'https://127.0.0.1/cb?x=1&y=2',
  'http://localhost/',
  'https://example.com/webhooks/relight',
  'http://[::1]:9000/cb',
  'HTTPS://EXAMPLE.COM/UPPER',
];
const badUrls = [
  '',
  '/relative/hook',
  'hook',
  '127.0.0.1:8080/hook',
  'example.com/hook',
  '//example.com/hook',
  'ftp://127.0.0.1/hook',
  'file:///etc/passwd',
  'javascript:alert(1)',
  'mailto:someone@example.com',
  'ws://127.0.0.1/socket',
  'http://',
  'https://',
  'not a url',
];
const urlFields: { schema: Schema; base: Record<string, unknown>; field: string }[] = [
  { schema: RelightBody, base: RELIGHT_BASE, field: 'webhook_url' },
  { schema: SkinEnhancerBody, base: SKIN_BASE, field: 'webhook_url' },
  { schema: VideoExtendBody, base: VIDEO_BASE, field: 'callback_url' },
];

describe.each(urlFields)('$field must be an absolute http(s) URL', ({ schema, base, field }) => {
  it.each(goodUrls)('accepts %s', (url) => expectAccepted(schema, { ...base, [field]: url }));
  it.each(badUrls)('rejects %j', (url) => expectRejectedAt(schema, { ...base, [field]: url }, field));
  // Strings that WHATWG's lenient parser repairs into a URL are still not absolute URIs (no "//"
  // authority, or backslashes, which RFC 3986 does not allow): the spec types these fields as URIs.
  it('rejects strings that are not written as absolute URIs, even if a lenient parser repairs them', () => {
    const notAbsolute = [
      'http:example.com/hook',
      'http:/127.0.0.1/hook',
      'https:\\\\127.0.0.1\\hook',
      'http:\\\\127.0.0.1/hook',
    ];
    const accepted = notAbsolute.filter((url) => schema.safeParse({ ...base, [field]: url }).success);
    expect(accepted).toEqual([]);
  });
  it('rejects a number', () => expectRejectedAt(schema, { ...base, [field]: 42 }, field));
  it('is optional', () => expectAccepted(schema, base));
});

// ---------------------------------------------------------------------------------------------
// Relight: image, light sources, prompt weights

describe('RelightBody', () => {
  it('requires image', () => {
    expectRejectedAt(RelightBody, {}, 'image');
    expectRejectedAt(RelightBody, { image: '' }, 'image');
  });

  it('accepts either light source alone', () => {
    expectAccepted(RelightBody, { ...RELIGHT_BASE, transfer_light_from_lightmap: 'bGlnaHQ=' });
    expectAccepted(RelightBody, { ...RELIGHT_BASE, transfer_light_from_reference_image: 'https://127.0.0.1/ref.png' });
  });
  it('rejects both light sources, with the issue on transfer_light_from_reference_image', () => {
    const paths = issuePaths(RelightBody, {
      ...RELIGHT_BASE,
      transfer_light_from_lightmap: 'bGlnaHQ=',
      transfer_light_from_reference_image: 'https://127.0.0.1/ref.png',
    });
    expect(paths).toEqual(['transfer_light_from_reference_image']);
  });

  it.each(['change_background', 'interpolate_from_original', 'preserve_details'])('%s must be a boolean', (field) => {
    expectAccepted(RelightBody, { ...RELIGHT_BASE, [field]: false });
    expectAccepted(RelightBody, { ...RELIGHT_BASE, [field]: true });
    expectRejectedAt(RelightBody, { ...RELIGHT_BASE, [field]: 'true' }, field);
    expectRejectedAt(RelightBody, { ...RELIGHT_BASE, [field]: 1 }, field);
  });
  it('advanced_settings.fixed_generation must be a boolean', () => {
    expectRejectedAt(
      RelightBody,
      { ...RELIGHT_BASE, advanced_settings: { fixed_generation: 'yes' } },
      'advanced_settings.fixed_generation',
    );
  });
});

const acceptedPrompts = [
  'a sunny beach at noon',
  '',
  '(text:1)',
  '(text:1.4)',
  '(text:1.25)',
  '(text:1.0)',
  '(text:1.00)',
  '(text:1.40)',
  '(warm light:1.2) on a (cold street:1.1)',
  '(a) (b)',
  'plain (parentheses) only',
  '(a (b) c)',
  'ratio 16:9, (soft glow:1.3)',
  'a stray ) parenthesis',
];
const rejectedPrompts = [
  '(text:0.99)',
  '(text:0)',
  '(text:0.5)',
  '(text:1.41)',
  '(text:1.5)',
  '(text:2)',
  '(text:1.234)',
  '(text:1.005)',
  '((a:1.2))',
  '(a (b:1.2))',
  '(a:1.2',
  'start (a:1.2 and never closed',
  '(a:b)',
  '(a:)',
  '(:1.2)',
  '(a:1.2:1.3)',
  '(a:-1.2)',
  '(a:1,2)',
  '(a:1.)',
  '(fine:1.2) then (bad:1.9)',
];

describe('relight prompt weights', () => {
  it.each(acceptedPrompts)('accepts %j', (prompt) => {
    expect(promptWeightProblem(prompt)).toBeNull();
    expectAccepted(RelightBody, { ...RELIGHT_BASE, prompt });
  });
  it.each(rejectedPrompts)('rejects %j on prompt', (prompt) => {
    expect(typeof promptWeightProblem(prompt)).toBe('string');
    expectRejectedAt(RelightBody, { ...RELIGHT_BASE, prompt }, 'prompt');
  });
  it('names the bad weight in the message', () => {
    expect(promptWeightProblem('(text:1.41)')).toContain('1.41');
    expect(promptWeightProblem('(text:0.99)')).toContain('0.99');
  });
});

// ---------------------------------------------------------------------------------------------
// Defaults

describe('defaults are applied', () => {
  it('relight', () => {
    const parsed = RelightBody.parse(RELIGHT_BASE);
    expect(parsed).toEqual({
      image: RELIGHT_BASE.image,
      change_background: true,
      interpolate_from_original: false,
      light_transfer_strength: 100,
      preserve_details: true,
      style: 'standard',
    });
    expect(parsed.advanced_settings).toBeUndefined();
  });
  it('relight advanced_settings, when the object is given', () => {
    expect(RelightBody.parse({ ...RELIGHT_BASE, advanced_settings: {} }).advanced_settings).toEqual({
      blacks: 50,
      brightness: 50,
      contrast: 50,
      engine: 'automatic',
      fixed_generation: false,
      saturation: 50,
      transfer_light_a: 'automatic',
      transfer_light_b: 'automatic',
      whites: 50,
    });
  });
  it('relight advanced_settings keeps given values and fills the rest', () => {
    const settings = RelightBody.parse({
      ...RELIGHT_BASE,
      advanced_settings: { whites: 0, engine: 'softy' },
    }).advanced_settings;
    expect(settings).toMatchObject({ whites: 0, engine: 'softy', blacks: 50, transfer_light_b: 'automatic' });
  });
  it('given values win over defaults', () => {
    const parsed = RelightBody.parse({
      ...RELIGHT_BASE,
      change_background: false,
      preserve_details: false,
      interpolate_from_original: true,
      light_transfer_strength: 0,
      style: 'clean',
    });
    expect(parsed).toMatchObject({
      change_background: false,
      preserve_details: false,
      interpolate_from_original: true,
      light_transfer_strength: 0,
      style: 'clean',
    });
  });
  it('skin enhancer', () => {
    expect(SkinEnhancerBody.parse(SKIN_BASE)).toEqual({
      image: SKIN_BASE.image,
      optimized_for: 'enhance_skin',
      sharpen: 0,
      smart_grain: 2,
    });
  });
  it('skin enhancer requires image', () => expectRejectedAt(SkinEnhancerBody, {}, 'image'));
  it('video extend', () => {
    expect(VideoExtendBody.parse(VIDEO_BASE)).toEqual({ model: 'vidq2-pro', duration: 5, resolution: '720p' });
  });
});

// ---------------------------------------------------------------------------------------------
// Credits (DESIGN.md §4): base + per_second × (duration − 1)

const creditRates: { model: 'vidq2-pro' | 'vidq2-turbo'; resolution: string; base: number; perSecond: number }[] = [
  { model: 'vidq2-pro', resolution: '540p', base: 30, perSecond: 10 },
  { model: 'vidq2-pro', resolution: '720p', base: 30, perSecond: 10 },
  { model: 'vidq2-pro', resolution: '1080p', base: 60, perSecond: 15 },
  { model: 'vidq2-turbo', resolution: '540p', base: 15, perSecond: 5 },
  { model: 'vidq2-turbo', resolution: '720p', base: 15, perSecond: 5 },
  { model: 'vidq2-turbo', resolution: '1080p', base: 40, perSecond: 10 },
];

describe.each(creditRates)('videoCredits $model $resolution', ({ model, resolution, base, perSecond }) => {
  it.each([1, 2, 3, 4, 5, 6, 7])('duration %s', (duration) => {
    expect(videoCredits(model, resolution, duration)).toBe(base + perSecond * (duration - 1));
  });
});

describe('videoCredits spot values', () => {
  it.each([
    ['vidq2-pro', '720p', 5, 70],
    ['vidq2-pro', '1080p', 7, 150],
    ['vidq2-turbo', '540p', 1, 15],
    ['vidq2-turbo', '1080p', 5, 80],
  ] as const)('%s %s %ss costs %s', (model, resolution, duration, credits) => {
    expect(videoCredits(model, resolution, duration)).toBe(credits);
  });
});
