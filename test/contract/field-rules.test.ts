// Field rules of the contract that bound what a request may carry: URLs, version ranges, the error
// map's sentences, the cap on reported problems, and the prompt check (linear, same verdicts).
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { fieldErrors } from '../../src/contract/errors.js';
import { urlField, versionRange, versionRangeField } from '../../src/contract/fields.js';
import { isHttpUrl } from '../../src/contract/url.js';
import { MAX_FIELD_ERRORS, RELIGHT } from '../../src/contract/limits.js';
import { promptWeightProblem } from '../../src/contract/proxy.js';
import { NodeInput, PublisherInput } from '../../src/contract/resources.js';

describe('URL fields', () => {
  it.each(['', 'https://example.com/icon.png', 'http://127.0.0.1:4880/a?b=c#d', 'HTTPS://EXAMPLE.COM'])(
    'take %j',
    (value) => {
      expect(urlField.safeParse(value).success).toBe(true);
    },
  );
  it.each([
    'icon.png',
    'not a url',
    'ftp://example.com/x',
    'http:example.com',
    'http:\\\\example.com',
    '//example.com',
    'https://',
    `https://x.test/${'a'.repeat(2048)}`,
  ])('refuse %j', (value) => {
    expect(urlField.safeParse(value).success).toBe(false);
  });
  it('are read in one pass: a million characters that almost make a URL are refused at once', () => {
    // The previous pattern backtracked: 100,000 characters ending in a space took 17.8 s here.
    expect(isHttpUrl(`http://${'a'.repeat(1_000_000)} `)).toBe(false);
    expect(isHttpUrl(`http://x/${'a/'.repeat(500_000)} `)).toBe(false);
    expect(isHttpUrl(`http://${'a'.repeat(1_000_000)}`)).toBe(true);
  });
  it('apply to every URL field of nodes and publishers', () => {
    for (const field of ['icon', 'banner_url', 'repository'] as const)
      expect(NodeInput.safeParse({ [field]: 'x.png' }).success, field).toBe(false);
    for (const field of ['website', 'logo', 'source_code_repo'] as const)
      expect(PublisherInput.safeParse({ [field]: 'notaurl' }).success, field).toBe(false);
    expect(PublisherInput.safeParse({ support: 'help@example.com' }).success).toBe(true);
  });
});

describe('version requirements', () => {
  it.each([['>=1.0.0'], ['>=0.3.0 <1.0'], ['>=0.3.0,<1.0'], ['^1.2'], ['*'], ['==1.2.3'], ['']])('take %j', (value) => {
    expect(versionRangeField.safeParse(value).success).toBe(true);
  });
  it.each([['banana'], ['>=1.0.0 <'], ['1.0.0.0.0'], ['version 1']])('refuse %j', (value) => {
    expect(versionRangeField.safeParse(value).success).toBe(false);
    expect(versionRange(value)).toBeUndefined();
  });
});

describe('the error map', () => {
  const message = (schema: z.ZodType, value: unknown) => schema.safeParse(value).error!.issues[0].message;
  it('says the rule and an example, never quoting the value', () => {
    expect(message(z.number().int(), 2.5)).toBe('must be a whole number (no decimals), such as 3');
    expect(message(z.array(z.string()), 'image')).toBe('must be a list, such as ["first", "second"]');
    expect(message(z.string().max(3), 'secret-long-value')).toBe('must be at most 3 characters long');
    expect(message(z.array(z.string()).max(2), ['a', 'b', 'c'])).toBe('must have at most 2 items');
    expect(message(z.number().max(5), 9)).toBe('must be at most 5');
    expect(message(z.enum(['a', 'b']), 'secret')).toBe('must be one of "a", "b"');
    expect(message(z.object({ a: z.string() }), {})).toBe('is required: give text, such as "example"');
    expect(message(z.number(), Number.NaN)).toBe('must be a number, such as 3');
  });
  it('keeps the messages schemas give', () => {
    expect(message(z.string().regex(/^a$/, 'must be "a"'), 'b')).toBe('must be "a"');
  });
});

describe('field problems', () => {
  it(`are reported ${MAX_FIELD_ERRORS} at most, with long keys and messages cut`, () => {
    const schema = z.record(z.string().max(2), z.unknown());
    const issues = schema.safeParse(
      Object.fromEntries(Array.from({ length: 500 }, (_, i) => [`${'k'.repeat(1000)}${i}`, 1])),
    ).error!.issues;
    expect(issues.length).toBeGreaterThan(MAX_FIELD_ERRORS);
    const details = fieldErrors(issues);
    expect(details).toHaveLength(MAX_FIELD_ERRORS);
    expect(JSON.stringify(details).length).toBeLessThan(MAX_FIELD_ERRORS * 500);
  });
});

/** The prompt check as it was (quadratic on unclosed "("): the verdicts must stay the same. */
function previousPromptWeightProblem(prompt: string): string | null {
  const { min, max, maxDecimals } = RELIGHT.promptWeight;
  const group = new RegExp(`^[^():]+:(\\d+(?:\\.\\d{1,${maxDecimals}})?)$`);
  const open: number[] = [];
  for (let i = 0; i < prompt.length; i++) {
    if (prompt[i] === '(') open.push(i);
    if (prompt[i] !== ')') continue;
    const start = open.pop();
    if (start === undefined) continue;
    const inner = prompt.slice(start + 1, i);
    if (!inner.includes(':')) continue;
    if (inner.includes('(') || open.length > 0) return `nested weighted group at character ${start + 1}`;
    const match = group.exec(inner);
    if (!match) return `malformed weighted group "(${inner})": write (text:weight) with a weight like 1.2`;
    const weight = Number(match[1]);
    if (weight < min || weight > max) return `weight ${match[1]} of "(${inner})" must be from ${min} to ${max}`;
  }
  const unclosed = open.find((at) => prompt.slice(at).includes(':'));
  if (unclosed !== undefined) return `unclosed weighted group at character ${unclosed + 1}`;
  return null;
}

describe('the relight prompt check', () => {
  it('gives the same verdict and message as before on any prompt of ( ) : digits and letters', () => {
    const prompt = fc.string({ unit: fc.constantFrom('(', ')', ':', '1', '.', '2', '4', 'a', ' '), maxLength: 40 });
    fc.assert(
      fc.property(prompt, (p) => promptWeightProblem(p) === previousPromptWeightProblem(p)),
      { numRuns: 3000, seed: 20261125 },
    );
  });

  it('reads a prompt of many "(" in one pass (the limit of the field stops longer ones before)', () => {
    // 200,000 "(" and no ":" took the previous check 0.75 s here (it grew with the square of the length).
    expect(promptWeightProblem('('.repeat(200_000))).toBeNull();
    expect(promptWeightProblem(`${'('.repeat(200_000)}:`)).toBe('unclosed weighted group at character 1');
    expect(RELIGHT.promptMax).toBeLessThanOrEqual(2000);
  });
});
