// Called by scripts/answer-checks.js (the first step of `npm run build`): writes
// src/contract/generated/requests.js and arguments.js, the checks of the requests the CLI builds and of
// the ids it takes as arguments, derived from the contract, and the field lists the manifest needs. A request schema goes through JSON Schema (input
// side, draft-07) and Ajv's standalone code, as the answers do; what JSON Schema cannot say is added as
// keywords that call rules.ts by name: `x-rule` (a refinement), `x-output` (what zod's parse outputs:
// an object's keys in the schema's order, a transform). So a valid `publish` loads no zod.
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import Ajv, { _, stringify } from 'ajv';
import standaloneCode from 'ajv/dist/standalone/index.js';

/** zod's reading of each schema the conversion meets, written into its JSON Schema (see the module's comment). */
function zodOverride({ z, namedRules }) {
  return ({ zodSchema: schema, jsonSchema: json, path }) => {
    const where = `request check at ${path.join('.') || '(root)'}`;
    const meta = namedRules.get(schema) ?? {};
    const refinements = (schema.def.checks ?? []).filter((check) => check instanceof z.ZodCustom).length;
    if (refinements) {
      if (schema instanceof z.ZodPipe) throw new Error(`${where}: a refinement after a transform has no check`);
      if (meta.rules?.length !== refinements)
        throw new Error(`${where}: a refinement without a name in rules.ts (use \`rule\` of fields.ts)`);
      json['x-rule'] = meta.rules;
    }
    const output = { ...json['x-output'] };
    if (schema instanceof z.ZodObject) {
      if (schema.def.catchall) throw new Error(`${where}: only plain objects (unknown keys dropped) have a check`);
      output.keys = Object.keys(schema.shape);
    }
    if (schema instanceof z.ZodPipe) {
      if (!(schema.def.out instanceof z.ZodTransform)) throw new Error(`${where}: a pipe into a schema has no check`);
      if (!meta.transform)
        throw new Error(`${where}: a transform without a name in rules.ts (use \`transform\` of fields.ts)`);
      output.transform = meta.transform;
    }
    if (Object.keys(output).length) json['x-output'] = output;
    if (schema instanceof z.ZodDefault) json.default = schema.def.defaultValue;
    if (schema instanceof z.ZodCustom || schema instanceof z.ZodTransform)
      throw new Error(`${where}: ${schema.def.type} has no check`);
  };
}

/** Ajv with the keywords that call rules.ts by name. */
function requestAjv(rules) {
  // Ajv as zod reads: lengths in code points (as zod's), patterns without the u flag (as zod's RegExp);
  // a missing property with a default takes it. No formats: zod's request schemas use none. A schema
  // used more than once is checked by a function of its own (`reused: 'ref'`, not inlined), which V8
  // compiles only when a request holds such a field: the first check costs ~1.5 ms instead of ~2.5.
  const ajv = new Ajv({
    code: { source: true, esm: true, lines: false },
    useDefaults: true,
    unicodeRegExp: false,
    strict: false,
    messages: false,
    validateFormats: false,
    allErrors: false,
    inlineRefs: false,
  });
  const rule = (cxt, name) => cxt.gen.scopeValue('func', { ref: rules.RULES[name], code: _`rules.RULES[${name}]` });
  ajv.addKeyword({
    keyword: 'x-rule',
    post: true, // after the type's own keywords, as zod refines a value that passed them
    schemaType: 'array',
    code(cxt) {
      for (const name of cxt.schema) cxt.fail(_`!${rule(cxt, name)}(${cxt.data})`);
    },
  });
  ajv.addKeyword({
    keyword: 'x-output',
    post: true,
    modifying: true,
    schemaType: 'object',
    code(cxt) {
      const { gen, it } = cxt;
      if (it.parentData === undefined) throw new Error('x-output at the root: wrap the schema');
      const output = gen.scopeValue('func', { ref: rules.output, code: _`rules.output` });
      const invalid = gen.scopeValue('func', { ref: rules.INVALID, code: _`rules.INVALID` });
      const what = gen.scopeValue('obj', { ref: cxt.schema, code: stringify(cxt.schema) });
      const value = gen.const('value', _`${output}(${cxt.data}, ${what})`);
      cxt.fail(_`${value} === ${invalid}`);
      gen.assign(_`${it.parentData}[${it.parentDataProperty}]`, value);
    },
  });

  return ajv;
}

/** The ES module of the checks of `requests` (id → zod schema), and its type declarations. */
function checksModule(contract, requests, extra = { code: [], types: [] }) {
  const { z, rules } = contract;
  const ajv = requestAjv(rules);
  const override = zodOverride(contract);
  const names = {};
  for (const [id, schema] of Object.entries(requests)) {
    const json = z.toJSONSchema(schema, {
      io: 'input',
      unrepresentable: 'any',
      target: 'draft-7',
      override,
      reused: 'ref',
    });
    const { $schema: _draft, definitions, ...request } = json;
    // The request is the property `value` of what is checked, so that its own output replaces it too.
    ajv.addSchema({ $id: id, type: 'object', properties: { value: request }, required: ['value'], definitions }, id);
    names[id] = id;
  }
  // Ajv's standalone code requires its own runtime for the length in code points, even as an ES module:
  // rules.ts has the same count, so the generated module needs nothing of Ajv.
  const checks = standaloneCode(ajv, names).replaceAll(
    'require("ajv/dist/runtime/ucs2length").default',
    'rules.codePoints',
  );
  if (checks.includes('require('))
    throw new Error(`request checks: Ajv's code requires ${/require\([^)]*\)/.exec(checks)[0]}`);
  const banner = '// Generated by scripts/request-checks.js from src/contract: do not edit.';
  return {
    code: [banner, "import * as rules from '../rules.js';", checks, ...extra.code, ''].join('\n'),
    types: [
      banner,
      "import type { RequestCheck } from '../requests.js';",
      ...Object.keys(names).map((id) => `export declare const ${id}: RequestCheck;`),
      ...extra.types,
      '',
    ].join('\n'),
  };
}

/**
 * The node fields a member writes, each with the type of its value, whether the spec deprecates it and
 * its description (the manifest maps `[tool.nodereg]` keys to them; `node update` has a flag for each).
 */
function nodeWritableList({ resources }) {
  const nodeWritable = resources.NODE_WRITABLE_FIELDS.map((field) => ({
    field,
    type: resources.nodeFieldType(field),
    deprecated: resources.NodeWritable.shape[field].meta()?.deprecated === true,
    description: resources.NodeWritable.shape[field].description ?? field,
  }));
  return {
    code: [`export const nodeWritable = ${JSON.stringify(nodeWritable, null, 2)};`],
    types: [
      `export declare const nodeWritable: { field: ${nodeWritable.map((f) => `'${f.field}'`).join(' | ')}; type: string; deprecated: boolean; description: string }[];`,
    ],
  };
}

/**
 * `contract`: zod (`toJSONSchema` and its classes), the contract's resources, `namedRules` of fields.ts,
 * and rules.ts (its functions are what the keywords call). Writes two modules: requests.js (the publish
 * body) and arguments.js (the ids and version commands take as arguments, and the node fields), so that
 * `node show ID` loads a few small checks, not the publish body's.
 */
export function writeRequestChecks(contract, out) {
  const { resources } = contract;
  const modules = {
    requests: checksModule(contract, { PublishBody: resources.PublishBody }),
    arguments: checksModule(
      contract,
      { NodeId: resources.nodeId, PublisherId: resources.publisherId, Semver: resources.semver },
      nodeWritableList(contract),
    ),
  };
  for (const [name, { code, types }] of Object.entries(modules)) {
    writeFileSync(join(out, `${name}.js`), code);
    writeFileSync(join(out, `${name}.d.ts`), types);
  }
}
