// The words of a generated request check (scripts/request-checks.js): the words its schemas give
// their own checks, taken out of its JSON Schema into a table by the schemaPath of the refusal each
// words, which check-words.ts reads at run time. Ajv's refusals inside a schema referred to by name
// start their schemaPath at that schema and name none, so schemas that would word the same schemaPath
// otherwise are written out in full where they are used.

/** A property name as Ajv writes it in an error's schemaPath. */
const fragment = (key) => encodeURIComponent(key.replaceAll('~', '~0').replaceAll('/', '~1'));

/** Each schema directly inside `schema` that Ajv may refuse at, with its schemaPath under `path`. */
function* subschemas(schema, path) {
  for (const keyword of ['properties', 'patternProperties'])
    for (const [key, inner] of Object.entries(schema[keyword] ?? {}))
      yield [inner, `${path}/${keyword}/${fragment(key)}`];
  for (const keyword of ['anyOf', 'allOf', 'oneOf'])
    for (const [i, inner] of (schema[keyword] ?? []).entries()) yield [inner, `${path}/${keyword}/${i}`];
  for (const keyword of ['items', 'additionalProperties', 'not', 'propertyNames', 'if', 'then', 'else'])
    yield [schema[keyword], `${path}/${keyword}`];
}

/**
 * Takes the words `schemaWords` wrote out of a check's JSON Schema, by the schemaPath of the refusal
 * they word (a missing property's under its object's `required`, then its name).
 */
function takeWords(schema, path = '#', words = {}) {
  if (!schema || typeof schema !== 'object') return words;
  for (const [keyword, message] of Object.entries(schema['x-words'] ?? {})) words[`${path}/${keyword}`] = message;
  for (const [key, message] of Object.entries(schema['x-missing'] ?? {})) words[`${path}/required/${key}`] = message;
  delete schema['x-words'];
  delete schema['x-missing'];
  for (const [inner, innerPath] of subschemas(schema, path)) takeWords(inner, innerPath, words);
  return words;
}

/** Every place of a schema a refusal may come from, by schemaPath, with the words that schema gives it (undefined: none). */
function refusalPlaces(schema, path = '#', places = new Map()) {
  if (!schema || typeof schema !== 'object') return places;
  for (const keyword of Object.keys(schema)) places.set(`${path}/${keyword}`, schema['x-words']?.[keyword]);
  for (const key of schema.required ?? []) places.set(`${path}/required/${key}`, schema['x-missing']?.[key]);
  for (const [inner, innerPath] of subschemas(schema, path)) refusalPlaces(inner, innerPath, places);
  return places;
}

/** The definitions whose words clash with the root's or an earlier definition's at the same schemaPath. */
function clashing(root, definitions) {
  const seen = refusalPlaces(root);
  const clashes = [];
  for (const [name, definition] of Object.entries(definitions)) {
    const places = refusalPlaces(definition);
    const clash = [...places].some(
      ([path, message]) => seen.has(path) && seen.get(path) !== message && (message ?? seen.get(path)) !== undefined,
    );
    if (clash) clashes.push(name);
    else for (const [path, message] of places) if (!seen.has(path)) seen.set(path, message);
  }
  return clashes;
}

/** `schema` with each reference to one of `inlined` (name → schema) replaced by a copy of that schema. */
function inline(schema, inlined, depth = 0) {
  if (!schema || typeof schema !== 'object') return schema;
  if (Array.isArray(schema)) return schema.map((item) => inline(item, inlined, depth));
  const name = schema.$ref?.startsWith('#/definitions/') ? schema.$ref.slice('#/definitions/'.length) : undefined;
  if (name && name in inlined) {
    if (depth > 32)
      throw new Error(`request check: ${name} refers to itself and words its refusals otherwise than another schema`);
    const { $ref: _, ...rest } = schema;
    return inline({ ...structuredClone(inlined[name]), ...rest }, inlined, depth + 1);
  }
  return Object.fromEntries(Object.entries(schema).map(([key, value]) => [key, inline(value, inlined, depth)]));
}

/**
 * `schema` with the default of each schema it refers to written beside the reference too: Ajv fills in a
 * property's default only from the property's own schema (zod writes a property as a reference when the
 * object is refined, which it converts twice).
 */
function withDefaults(schema, definitions) {
  if (!schema || typeof schema !== 'object') return schema;
  if (Array.isArray(schema)) return schema.map((item) => withDefaults(item, definitions));
  const out = Object.fromEntries(Object.entries(schema).map(([key, value]) => [key, withDefaults(value, definitions)]));
  const name = schema.$ref?.startsWith('#/definitions/') ? schema.$ref.slice('#/definitions/'.length) : undefined;
  if (name && out.default === undefined && definitions[name]?.default !== undefined)
    out.default = definitions[name].default;
  return out;
}

/**
 * The words of a check: its own, and those of the schemas it refers to, which Ajv checks by functions
 * of their own whose refusals' schemaPaths start at them (`#/maxLength`), naming no schema. So two of
 * them refused at the same schemaPath must word it alike: a schema that words it otherwise (or words it
 * where another leaves it to the error map) is written out in full where it is used, as the root is.
 */
export function rootWords(check) {
  let { definitions = {}, ...root } = withDefaults(check, check.definitions ?? {});
  for (let clashes = clashing(root, definitions); clashes.length; clashes = clashing(root, definitions)) {
    const inlined = Object.fromEntries(clashes.map((name) => [name, definitions[name]]));
    root = inline(root, inlined);
    definitions = inline(
      Object.fromEntries(Object.entries(definitions).filter(([name]) => !(name in inlined))),
      inlined,
    );
  }
  const words = takeWords(root);
  for (const definition of Object.values(definitions)) Object.assign(words, takeWords(definition));
  return { check: Object.keys(definitions).length ? { ...root, definitions } : root, words };
}
