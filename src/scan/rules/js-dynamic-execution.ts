import { defineRule, isLiteral } from '../rule.js';

export default defineRule({
  id: 'js-dynamic-execution',
  severity: 'high',
  description:
    '`eval` or `new Function` of a value computed at run time in shipped JavaScript: code the browser runs that no reviewer saw.',
  hint: 'call the code directly; parse data with JSON.parse; for a vendored library (web/lib/…min.js), ship a build of it without eval or new Function (its CSP-safe build, where it has one)',
  requires: { names: ['eval', 'Function'] },
  patterns: {
    javascript: `
((call_expression function: (identifier) @name arguments: (arguments . (_) @arg)) @finding
 (#eq? @name "eval"))
((call_expression function: (member_expression object: (identifier) @object property: (property_identifier) @name) arguments: (arguments . (_) @arg)) @finding
 (#any-of? @object "window" "globalThis" "self") (#eq? @name "eval"))
((new_expression constructor: (identifier) @name arguments: (arguments) @args) @finding
 (#eq? @name "Function"))
((call_expression function: (identifier) @name arguments: (arguments) @args) @finding
 (#eq? @name "Function"))`,
  },
  check: ({ name, arg, args }) => {
    const values = arg ? [arg] : args.namedChildren.filter((c) => c && c.type !== 'comment');
    return values.every((value) => isLiteral(value))
      ? undefined
      : `${name.text === 'Function' ? 'new Function' : 'eval'}() of a value computed at run time`;
  },
  examples: {
    javascript: {
      bad: `export function run(source, body) {
  eval(source); // finding
  const fn = new Function("a", body); // finding
  window.eval(\`\${source}\`); // finding
  return Function(body)(); // finding
}
`,
      good: `/** Never eval(source) or new Function("a", body). */
export function run(source) {
  // eval(source)
  const text = "eval(source)";
  const global = new Function("return this")();
  return [JSON.parse(source), global, eval("1 + 1"), text];
}
`,
    },
  },
});
