// Called by scripts/answer-checks.js (the first step of `npm run build`): writes the checks of the
// requests the CLI sends, derived from the contract, into src/contract/generated/: requests.js (the
// publish body), arguments.js (the ids and versions commands take as arguments, and the field lists the
// manifest needs), node-fields.js (the fields `init` asks for) and operations/ (every operation's params,
// query and JSON body, a module each). A request schema goes through JSON Schema (input side, draft-07)
// and Ajv's standalone code, as the answers do; what JSON Schema cannot say is added as keywords that
// call rules.ts by name: `x-rule` (a refinement), `x-output` (what zod's parse outputs: an object's keys
// in the schema's order, a transform). So the CLI checks what it sends without loading zod.
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import Ajv, { _, stringify } from 'ajv';
import standaloneCode from 'ajv/dist/standalone/index.js';
import { rootWords } from './request-words.js';

/** A check's own message, when the schema gives one (`.regex(re, 'must be …')`); undefined for the error map's. */
function ownMessage(check) {
  const error = check._zod.def.error;
  if (!error) return undefined;
  const said = error({});
  return typeof said === 'string' ? said : said?.message;
}

/** The JSON Schema keywords a zod check becomes, for the words a schema gives it. */
function keywordsOf(check, isArray) {
  const def = check._zod.def;
  if (def.check === 'min_length') return [isArray ? 'minItems' : 'minLength'];
  if (def.check === 'max_length') return [isArray ? 'maxItems' : 'maxLength'];
  if (def.check === 'length_equals') return isArray ? ['minItems', 'maxItems'] : ['minLength', 'maxLength'];
  if (def.check === 'string_format' && def.format === 'regex') return ['pattern'];
  if (def.check === 'greater_than') return [def.inclusive ? 'minimum' : 'exclusiveMinimum'];
  if (def.check === 'less_than') return [def.inclusive ? 'maximum' : 'exclusiveMaximum'];
  return [];
}

/**
 * The words a schema gives its own checks, by keyword (`x-words`), and those of a missing property by
 * name (`x-missing`, as zod's parse of undefined words it): the generated checks word their refusals
 * with them (check-words.ts), and with the contract's error map for the rest.
 */
function schemaWords(z, schema, json, where) {
  const words = {};
  for (const check of schema.def.checks ?? []) {
    const message = check instanceof z.ZodCustom ? undefined : ownMessage(check);
    if (message === undefined) continue;
    const keywords = keywordsOf(check, schema instanceof z.ZodArray);
    if (!keywords.length || keywords.some((keyword) => keyword in words))
      throw new Error(`${where}: no words for the message of its ${check._zod.def.check}`);
    for (const keyword of keywords) words[keyword] = message;
  }
  // a string format's pattern (an e-mail…) is worded as the error map words the format
  const formats = [schema, ...(schema.def.checks ?? [])].filter(
    (check) => check._zod.def.check === 'string_format' && check._zod.def.format !== 'regex',
  );
  if (formats.length) {
    const issue = schema.safeParse('\u0000').error?.issues.find((i) => i.code === 'invalid_format');
    if (!issue || 'pattern' in words) throw new Error(`${where}: no words for its format`);
    words.pattern = issue.message;
  }
  // zod refuses a value of another type as it refuses any value not listed
  if (schema instanceof z.ZodEnum || schema instanceof z.ZodLiteral)
    words.type = schema.safeParse(Symbol('none')).error.issues[0].message;
  if (Object.keys(words).length) json['x-words'] = words;
  if (!(schema instanceof z.ZodObject)) return;
  const missing = {};
  for (const [key, property] of Object.entries(schema.shape)) {
    const parsed = property.safeParse(undefined);
    if (!parsed.success) missing[key] = parsed.error.issues[0].message;
  }
  if (Object.keys(missing).length) json['x-missing'] = missing;
}

/**
 * `X or null` as `if null, else X` rather than a union: X's refusal is then the check's own (a union
 * keeps every branch's), and is worded as zod words a nullable field's, by X's rule.
 */
function nullOrElse(json) {
  const [inner, none, ...more] = json.anyOf ?? [];
  if (none?.type !== 'null' || more.length || Object.keys(none).length !== 1) return;
  delete json.anyOf;
  json.if = { type: 'null' };
  json.else = inner;
}

/**
 * An object's properties checked one at a time in the schema's order, each its presence then its value,
 * as zod does (Ajv checks every required property before any value): so the first refusal is zod's.
 */
function inShapeOrder(json, where) {
  const { properties = {}, required = [], 'x-missing': missing = {} } = json;
  const keys = Object.keys(properties);
  if (keys.length < 2) return;
  delete json.properties;
  delete json.required;
  delete json['x-missing'];
  if (json.allOf) {
    // a refined object's copy of the object it refines, already in order
    const ordered = json.allOf.flatMap((item) => Object.keys(item.properties ?? {}));
    if (ordered.join() !== keys.join()) throw new Error(`${where}: an object with allOf has no check`);
    return;
  }
  json.allOf = keys.map((key) => ({
    ...(required.includes(key) ? { required: [key] } : {}),
    ...(missing[key] !== undefined ? { 'x-missing': { [key]: missing[key] } } : {}),
    properties: { [key]: properties[key] },
  }));
}

/** zod's reading of each schema the conversion meets, written into its JSON Schema (see the module's comment). */
function zodOverride({ z, namedRules, repeatedParams = new Set() }) {
  // by definition: the schema a conversion meets is a copy of the one fields.ts holds
  const repeated = new Set([...repeatedParams].map((schema) => schema.def));
  return ({ zodSchema: schema, jsonSchema: json, path }) => {
    const where = `request check at ${path.join('.') || '(root)'}`;
    const meta = namedRules.get(schema) ?? {};
    for (const check of schema.def.checks ?? [])
      if (check._zod.def.check === 'overwrite')
        throw new Error(
          `${where}: a check that changes the value (.trim()…) has no check: use \`transform\` of fields.ts`,
        );
    const refinements = (schema.def.checks ?? []).filter((check) => check instanceof z.ZodCustom);
    if (refinements.length) {
      if (schema instanceof z.ZodPipe) throw new Error(`${where}: a refinement after a transform has no check`);
      if (meta.rules?.length !== refinements.length)
        throw new Error(`${where}: a refinement without a name in rules.ts (use \`rule\` of fields.ts)`);
      // each rule with the message the schema gives it, which words its refusal
      // and the field its refusal names, when the rule names one below the value it checks
      json['x-rule'] = meta.rules.map((name, i) => {
        const path = refinements[i]._zod.def.path ?? [];
        return [name, ownMessage(refinements[i]), ...(path.length ? [path] : [])];
      });
    }
    schemaWords(z, schema, json, where);
    if (schema instanceof z.ZodNullable) nullOrElse(json);
    if (json.anyOf || json.oneOf) throw new Error(`${where}: a union has no check (its refusal has no words)`);
    const output = { ...json['x-output'] };
    if (schema instanceof z.ZodObject) {
      inShapeOrder(json, where);
      if (schema.def.catchall) throw new Error(`${where}: only plain objects (unknown keys dropped) have a check`);
      output.keys = Object.keys(schema.shape);
    }
    // a parameter that may be repeated (fields.ts `repeated`) is checked as the list the client sends
    if (schema instanceof z.ZodPipe && !repeated.has(schema.def)) {
      if (!(schema.def.out instanceof z.ZodTransform)) throw new Error(`${where}: a pipe into a schema has no check`);
      if (!meta.transform)
        throw new Error(`${where}: a transform without a name in rules.ts (use \`transform\` of fields.ts)`);
      output.transform = meta.transform;
    }
    if (Object.keys(output).length) json['x-output'] = output;
    if (schema instanceof z.ZodDefault) {
      // the check reads the default as input, where zod gives it as output: the two must agree
      const read = schema.def.innerType.safeParse(schema.def.defaultValue);
      if (!read.success || JSON.stringify(read.data) !== JSON.stringify(schema.def.defaultValue))
        throw new Error(`${where}: a default that is not its own input has no check: use .prefault(input)`);
      json.default = schema.def.defaultValue;
    }
    if (schema instanceof z.ZodCustom || schema instanceof z.ZodTransform)
      throw new Error(`${where}: ${schema.def.type} has no check`);
  };
}

/** Ajv with the keywords that call rules.ts and version-range.ts by name. */
function requestAjv(rules, ranges) {
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
    strictNumbers: true, // NaN is not a number, as zod reads it
  });
  // a rule that reads a version range is in version-range.ts (`ranges`), which a module imports only if it calls one
  const rule = (cxt, name) =>
    cxt.gen.scopeValue(
      'func',
      name in ranges.RANGE_RULES
        ? { ref: ranges.RANGE_RULES[name], code: _`ranges.RANGE_RULES[${name}]` }
        : { ref: rules.RULES[name], code: _`rules.RULES[${name}]` },
    );
  // A refusal of these keywords carries its words: the rule's message, or the transform's first issue.
  const error = {
    message: '',
    params: ({ params }) =>
      params.issue
        ? _`{issue: ${params.issue}}`
        : params.path
          ? _`{message: ${params.message}, path: ${params.path}}`
          : _`{message: ${params.message}}`,
  };
  ajv.addKeyword({
    keyword: 'x-rule',
    post: true, // after the type's own keywords, as zod refines a value that passed them
    schemaType: 'array',
    error,
    code(cxt) {
      for (const [name, message, path = []] of cxt.schema)
        cxt.gen.if(_`!${rule(cxt, name)}(${cxt.data})`, () =>
          // the field the rule's refusal names, below the value it checks (none: that value)
          cxt.error(false, path.length ? { message, path: stringify(path) } : { message }),
        );
    },
  });
  ajv.addKeyword({
    keyword: 'x-output',
    post: true,
    modifying: true,
    schemaType: 'object',
    error,
    code(cxt) {
      const { gen, it } = cxt;
      if (it.parentData === undefined) throw new Error('x-output at the root: wrap the schema');
      const output = gen.scopeValue('func', { ref: rules.output, code: _`rules.output` });
      const refused = gen.scopeValue('func', { ref: rules.Refused, code: _`rules.Refused` });
      const what = gen.scopeValue('obj', { ref: cxt.schema, code: stringify(cxt.schema) });
      const value = gen.const('value', _`${output}(${cxt.data}, ${what})`);
      gen.if(
        _`${value} instanceof ${refused}`,
        () => cxt.error(false, { issue: _`${value}.issues[0]` }),
        () => gen.assign(_`${it.parentData}[${it.parentDataProperty}]`, value),
      );
    },
  });

  return ajv;
}

/**
 * The ES module of the checks of `requests` (id → zod schema), and its type declarations. `worded`: the
 * module carries the words of their refusals (check-words.ts), for checks that word their own.
 */
export function checksModule(contract, requests, extra = { code: [], types: [] }, worded = true) {
  const { z, rules, ranges } = contract;
  const ajv = requestAjv(rules, ranges);
  const override = zodOverride(contract);
  const names = {};
  const words = {};
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
    const root = { $id: id, type: 'object', properties: { value: request }, required: ['value'], definitions };
    const checked = rootWords(root);
    words[id] = checked.words;
    ajv.addSchema(checked.check, id);
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
    code: [
      banner,
      "import * as rules from '../rules.js';",
      ...(checks.includes('ranges.RANGE_RULES') ? ["import * as ranges from '../version-range.js';"] : []),
      checks,
      ...(worded ? [`export const words = ${JSON.stringify(words, null, 2)};`] : []),
      ...extra.code,
      '',
    ].join('\n'),
    types: [
      banner,
      "import type { RequestCheck } from '../requests.js';",
      ...(worded ? ["import type { Words } from '../check-words.js';"] : []),
      ...Object.keys(names).map((id) => `export declare const ${id}: RequestCheck;`),
      ...(worded
        ? [
            `export declare const words: Record<${Object.keys(names)
              .map((id) => `'${id}'`)
              .join(' | ')}, Words>;`,
          ]
        : []),
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

/** The node fields `init` checks, by the name of their generated check. */
const INIT_FIELDS = { NodeName: 'name', NodeDescription: 'description', NodeTags: 'tags', NodeIcon: 'icon' };

/**
 * `contract`: zod (`toJSONSchema` and its classes), the contract's resources, `namedRules` of fields.ts,
 * rules.ts and version-range.ts (`ranges`): their functions are what the keywords call. Writes three
 * modules: requests.js (the publish body), arguments.js (the ids and version commands take as arguments,
 * and the node fields) and node-fields.js (the fields `init` asks for), so that `node show ID` loads a
 * few small checks, not the publish body's.
 */
export function writeRequestChecks(contract, out) {
  const { resources } = contract;
  const modules = {
    // a refused publish body is worded by zod, all its problems at once (package/manifest.ts): no words here
    requests: checksModule(contract, { PublishBody: resources.PublishBody }, undefined, false),
    arguments: checksModule(
      contract,
      {
        NodeId: resources.nodeId,
        PublisherId: resources.publisherId,
        Semver: resources.semver,
      },
      nodeWritableList(contract),
    ),
    // the node fields `init` asks for, as a user types them (a string, never null)
    'node-fields': checksModule(
      contract,
      Object.fromEntries(
        Object.entries(INIT_FIELDS).map(([id, field]) => [id, resources.NodeWritable.shape[field].unwrap().unwrap()]),
      ),
    ),
  };
  for (const [name, { code, types }] of Object.entries(modules)) {
    writeFileSync(join(out, `${name}.js`), code);
    writeFileSync(join(out, `${name}.d.ts`), types);
  }
  writeOperationChecks(contract, out);
}

/**
 * The checks of every operation's params, query and JSON body, a module per operation under
 * operations/, and operations.js, which imports one when a command first checks a request of it.
 */
function writeOperationChecks(contract, out) {
  const dir = join(out, 'operations');
  rmSync(dir, { recursive: true, force: true });
  mkdirSync(dir, { recursive: true });
  const ids = [];
  for (const operation of contract.allOperations) {
    const parts = { params: operation.params, query: operation.query };
    if (operation.bodyKind === 'json') parts.body = operation.body;
    const { code, types } = checksModule(contract, parts);
    // a level deeper than the modules beside them
    writeFileSync(join(dir, `${operation.id}.js`), code.replaceAll("from '../", "from '../../"));
    writeFileSync(join(dir, `${operation.id}.d.ts`), types.replaceAll("from '../", "from '../../"));
    ids.push(operation.id);
  }
  const banner = '// Generated by scripts/request-checks.js from src/contract: do not edit.';
  writeFileSync(
    join(out, 'operations.js'),
    [
      banner,
      'export const operations = {',
      ...ids.map((id) => `  ${id}: () => import('./operations/${id}.js'),`),
      '};',
      '',
    ].join('\n'),
  );
  writeFileSync(
    join(out, 'operations.d.ts'),
    [
      banner,
      "import type { OperationChecks } from '../operation-checks.js';",
      `export declare const operations: Record<${ids.map((id) => `'${id}'`).join(' | ')}, () => Promise<OperationChecks>>;`,
      '',
    ].join('\n'),
  );
}
