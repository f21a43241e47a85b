export function run(t) {
  return window["ev" + "al"](t); // expect: js-dynamic-execution
}
