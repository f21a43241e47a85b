// Property tests of the wire rules. Each property has a fixed seed and numRuns so its time is bounded.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { z } from 'zod';
import { RelightBody, SkinEnhancerBody, VideoExtendBody, promptWeightProblem } from '../../src/contract/proxy.js';
import { StarQuery } from '../../src/contract/registry.js';
import { NodeInput, PublisherInput, nodeId } from '../../src/contract/resources.js';

const SEED = 20240611;
const RUNS = 200;
const opts = { seed: SEED, numRuns: RUNS };

const RELIGHT = { image: 'aGVsbG8=' };
const SKIN = { image: 'aGVsbG8=' };
const VIDEO = { model: 'vidq2-turbo' };

const outside = (min: number, max: number) =>
  fc.oneof(
    fc.integer({ max: min - 1 }),
    fc.integer({ min: max + 1 }),
    fc.integer({ min: min - 5, max: min - 1 }),
    fc.integer({ min: max + 1, max: max + 5 }),
  );

function rejectedAt(schema: z.ZodType, value: unknown, path: string): boolean {
  const result = schema.safeParse(value);
  return !result.success && result.error.issues.some((i) => i.path.map(String).join('.') === path);
}

const percentFields: [string, z.ZodType, (v: unknown) => unknown][] = [
  ['light_transfer_strength', RelightBody, (v) => ({ ...RELIGHT, light_transfer_strength: v })],
  ['sharpen', SkinEnhancerBody, (v) => ({ ...SKIN, sharpen: v })],
  ['smart_grain', SkinEnhancerBody, (v) => ({ ...SKIN, smart_grain: v })],
  ...['whites', 'blacks', 'brightness', 'contrast', 'saturation'].map(
    (sub) =>
      [`advanced_settings.${sub}`, RelightBody, (v: unknown) => ({ ...RELIGHT, advanced_settings: { [sub]: v } })] as [
        string,
        z.ZodType,
        (v: unknown) => unknown,
      ],
  ),
];

describe.each(percentFields)('percent field %s', (path, schema, build) => {
  it('rejects every integer outside 0–100', () => {
    fc.assert(
      fc.property(outside(0, 100), (v) => rejectedAt(schema, build(v), path)),
      opts,
    );
  });
  it('accepts every integer inside 0–100', () => {
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 100 }), (v) => schema.safeParse(build(v)).success),
      opts,
    );
  });
  it('rejects every non-integer', () => {
    const nonInteger = fc.double({ min: -200, max: 200, noNaN: true }).filter((d) => !Number.isInteger(d));
    fc.assert(
      fc.property(nonInteger, (v) => rejectedAt(schema, build(v), path)),
      opts,
    );
  });
});

describe('video duration', () => {
  it('rejects every integer outside 1–7', () => {
    fc.assert(
      fc.property(outside(1, 7), (d) => rejectedAt(VideoExtendBody, { ...VIDEO, duration: d }, 'duration')),
      opts,
    );
  });
  it('accepts every integer inside 1–7', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 7 }),
        (d) => VideoExtendBody.parse({ ...VIDEO, duration: d }).duration === d,
      ),
      opts,
    );
  });
  it('rejects non-integers', () => {
    const nonInteger = fc.double({ min: 0, max: 8, noNaN: true }).filter((d) => !Number.isInteger(d));
    fc.assert(
      fc.property(nonInteger, (d) => rejectedAt(VideoExtendBody, { ...VIDEO, duration: d }, 'duration')),
      opts,
    );
  });
});

describe('string length limits', () => {
  it('video prompt: every length above 2000 rejected, every length up to 2000 accepted', () => {
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 6000 }), fc.constantFrom('a', 'é', ' ', '字'), (n, ch) => {
        const ok = VideoExtendBody.safeParse({ ...VIDEO, prompt: ch.repeat(n) }).success;
        return n <= 2000 ? ok : !ok && rejectedAt(VideoExtendBody, { ...VIDEO, prompt: ch.repeat(n) }, 'prompt');
      }),
      opts,
    );
  });
  it('video payload: above 1048576 rejected, at or below accepted', () => {
    fc.assert(
      fc.property(fc.integer({ min: -64, max: 64 }), (delta) => {
        const n = 1_048_576 + delta;
        const ok = VideoExtendBody.safeParse({ ...VIDEO, payload: 'x'.repeat(n) }).success;
        return delta <= 0 ? ok : !ok;
      }),
      { seed: SEED, numRuns: 60 },
    );
  });
  it('node description: above 1000 rejected', () => {
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 3000 }), (n) => {
        const ok = NodeInput.safeParse({ description: 'd'.repeat(n) }).success;
        return n <= 1000 ? ok : rejectedAt(NodeInput, { description: 'd'.repeat(n) }, 'description');
      }),
      opts,
    );
  });
  it('publisher description: above 1000 rejected', () => {
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 3000 }), (n) => {
        const ok = PublisherInput.safeParse({ description: 'd'.repeat(n) }).success;
        return n <= 1000 ? ok : !ok;
      }),
      opts,
    );
  });
  it('node id: above 100 characters rejected', () => {
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 400 }), (n) => {
        const id = 'a'.repeat(n);
        return nodeId.safeParse(id).success === n <= 100;
      }),
      opts,
    );
  });
});

describe('prompt weights', () => {
  // text of a group: no "(", ")" or ":", and not empty
  const groupText = fc.string({ minLength: 1, maxLength: 20 }).filter((s) => !/[():]/.test(s));

  it('weights from 1 to 1.4 with at most two decimals are accepted', () => {
    const weight = fc
      .integer({ min: 100, max: 140 })
      .chain((hundredths) => fc.constantFrom(String(hundredths / 100), (hundredths / 100).toFixed(2)));
    fc.assert(
      fc.property(
        groupText,
        weight,
        fc.string({ maxLength: 20 }).filter((s) => !/[():]/.test(s)),
        (text, w, around) => {
          const prompt = `${around}(${text}:${w})${around}`;
          return promptWeightProblem(prompt) === null && RelightBody.safeParse({ ...RELIGHT, prompt }).success;
        },
      ),
      opts,
    );
  });

  it('weights outside [1, 1.4] are rejected', () => {
    const hundredths = fc.oneof(fc.integer({ min: 0, max: 99 }), fc.integer({ min: 141, max: 100_000 }));
    const weight = hundredths
      .chain((h) => fc.constantFrom(String(h / 100), (h / 100).toFixed(2), (h / 100).toFixed(1)))
      .filter((w) => Number(w) < 1 || Number(w) > 1.4);
    fc.assert(
      fc.property(groupText, weight, (text, w) => {
        const prompt = `(${text}:${w})`;
        return (
          typeof promptWeightProblem(prompt) === 'string' && rejectedAt(RelightBody, { ...RELIGHT, prompt }, 'prompt')
        );
      }),
      opts,
    );
  });

  it('weights with three or more decimals are rejected, even inside the range', () => {
    const weight = fc
      .tuple(fc.integer({ min: 1000, max: 1400 }), fc.integer({ min: 1, max: 9 }))
      .map(([thousandths, extra]) => `${(thousandths / 1000).toFixed(3)}${extra}`);
    fc.assert(
      fc.property(groupText, weight, (text, w) => promptWeightProblem(`(${text}:${w})`) !== null),
      opts,
    );
  });

  it('a weighted group nested in any parentheses is rejected', () => {
    const w = fc.integer({ min: 100, max: 140 }).map((h) => String(h / 100));
    fc.assert(
      fc.property(
        groupText,
        groupText,
        w,
        (outer, inner, weight) =>
          promptWeightProblem(`(${outer} (${inner}:${weight}))`) !== null &&
          promptWeightProblem(`((${inner}:${weight}))`) !== null,
      ),
      opts,
    );
  });

  it('text with only plain parentheses is accepted', () => {
    const plain = fc
      .array(
        fc.oneof(
          fc.constantFrom('(', ')', ' '),
          fc.string({ maxLength: 5 }).filter((s) => !/[():]/.test(s)),
        ),
        { maxLength: 20 },
      )
      .map((a) => a.join(''));
    fc.assert(
      fc.property(plain, (prompt) => promptWeightProblem(prompt) === null),
      opts,
    );
  });
});

describe('enums reject strings outside them', () => {
  const cases: [string, z.ZodType, readonly string[], (v: string) => unknown][] = [
    [
      'style',
      RelightBody,
      ['standard', 'darker_but_realistic', 'clean', 'smooth', 'brighter', 'contrasted_n_hdr', 'just_composition'],
      (v) => ({ ...RELIGHT, style: v }),
    ],
    [
      'advanced_settings.engine',
      RelightBody,
      ['automatic', 'balanced', 'cool', 'real', 'illusio', 'fairy', 'colorful_anime', 'hard_transform', 'softy'],
      (v) => ({ ...RELIGHT, advanced_settings: { engine: v } }),
    ],
    [
      'advanced_settings.transfer_light_a',
      RelightBody,
      ['automatic', 'low', 'medium', 'normal', 'high', 'high_on_faces'],
      (v) => ({ ...RELIGHT, advanced_settings: { transfer_light_a: v } }),
    ],
    [
      'advanced_settings.transfer_light_b',
      RelightBody,
      [
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
      (v) => ({ ...RELIGHT, advanced_settings: { transfer_light_b: v } }),
    ],
    [
      'optimized_for',
      SkinEnhancerBody,
      ['enhance_skin', 'improve_lighting', 'enhance_everything', 'transform_to_real', 'no_make_up'],
      (v) => ({ ...SKIN, optimized_for: v }),
    ],
    ['model', VideoExtendBody, ['vidq2-pro', 'vidq2-turbo'], (v) => ({ model: v })],
    ['resolution', VideoExtendBody, ['540p', '720p', '1080p'], (v) => ({ ...VIDEO, resolution: v })],
  ];
  it.each(cases)('%s', (path, schema, values, build) => {
    // enum-like: a listed value mutated (case, affix, edit), or an arbitrary identifier-ish string
    const mutated = fc
      .tuple(fc.constantFrom(...values), fc.string({ minLength: 1, maxLength: 3 }), fc.nat(3))
      .map(([v, s, how]) => [v.toUpperCase(), `${v}${s}`, `${s}${v}`, v.slice(0, -1) + s][how]);
    const identifier = fc.stringMatching(/^[a-z0-9_-]{0,24}$/);
    const candidate = fc.oneof(mutated, identifier).filter((s) => !values.includes(s));
    fc.assert(
      fc.property(candidate, (s) => rejectedAt(schema, build(s), path)),
      opts,
    );
  });
});

describe('StarQuery', () => {
  it('rejects every integer outside 1–5, as a number or as a query string', () => {
    fc.assert(
      fc.property(
        outside(1, 5),
        (star) => !StarQuery.safeParse({ star }).success && !StarQuery.safeParse({ star: String(star) }).success,
      ),
      opts,
    );
  });
  it('accepts every integer from 1 to 5, from a query string', () => {
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 5 }), (star) => StarQuery.parse({ star: String(star) }).star === star),
      opts,
    );
  });
  it('rejects non-integers', () => {
    const nonInteger = fc.double({ min: 0, max: 6, noNaN: true }).filter((d) => !Number.isInteger(d));
    fc.assert(
      fc.property(nonInteger, (star) => !StarQuery.safeParse({ star: String(star) }).success),
      opts,
    );
  });
});

it('fast-check finds a counterexample when one exists (the harness can fail)', () => {
  expect(() =>
    fc.assert(
      fc.property(
        fc.integer({ min: -1000, max: 1000 }),
        (v) => RelightBody.safeParse({ ...RELIGHT, light_transfer_strength: v }).success,
      ),
      opts,
    ),
  ).toThrow(/Counterexample/);
});
