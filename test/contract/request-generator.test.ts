// The generator of the request checks (scripts/request-checks.js), on schemas made for the case: a
// generated check must word a refusal as zod's parse words its first issue, wherever the schema sits.
import { writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { describe, expect, it } from 'vitest';
import * as z from 'zod';
import { checksModule } from '../../scripts/request-checks.js';
import { type CheckError, refusal, type Words } from '../../src/contract/check-words.js';
import { fieldErrors } from '../../src/contract/errors.js';
import { namedRules } from '../../src/contract/fields.js';
import * as rules from '../../src/contract/rules.js';
import * as ranges from '../../src/contract/version-range.js';
import { tempDir } from '../helpers.js';

type Check = ((data: unknown) => boolean) & { errors?: CheckError[] | null };

/** The generated module of `requests` (id → schema), imported. */
async function generate(requests: Record<string, z.ZodType>) {
  const { code } = checksModule({ z, rules, ranges, namedRules }, requests);
  const rulesUrl = pathToFileURL(resolve(import.meta.dirname, '../../src/contract/rules.ts')).href;
  const file = join(tempDir(), 'checks.js');
  writeFileSync(file, code.replace("'../rules.js'", JSON.stringify(rulesUrl)));
  return (await import(pathToFileURL(file).href)) as Record<string, Check> & { words: Record<string, Words> };
}

/** What the generated check `id` says of `value`, and what zod's parse says. */
function both(module: Awaited<ReturnType<typeof generate>>, id: string, schema: z.ZodType, value: unknown) {
  const holder = { value };
  const check = module[id]!;
  const parsed = schema.safeParse(value);
  return {
    generated: check(holder) ? undefined : refusal(check.errors ?? [], holder, module.words[id]!),
    zod: parsed.success ? undefined : fieldErrors(parsed.error.issues)[0],
  };
}

describe('the request checks generator', () => {
  it('words a refusal of a reused schema by that schema, not by another one refused at the same place', async () => {
    // each is used twice, so that each is a definition of its own, checked by a function of its own
    const startsA = z.string().regex(/^a/, 'must start with a');
    const startsB = z.string().regex(/^b/);
    const startsC = z.string().regex(/^c/, 'must start with c');
    const Body = z.object({ a: startsA, a2: startsA, b: startsB, b2: startsB, c: startsC, c2: startsC });
    const module = await generate({ Body });
    const good = { a: 'a', a2: 'a', b: 'b', b2: 'b', c: 'c', c2: 'c' };
    for (const field of ['a', 'b2', 'c']) {
      const { generated, zod } = both(module, 'Body', Body, { ...good, [field]: 'x' });
      expect(zod?.path).toBe(field);
      expect(generated).toEqual(zod);
    }
  });
});
