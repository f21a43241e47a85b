const e = eval;
export function run(t) {
  return e(t); // expect: js-dynamic-execution
}
