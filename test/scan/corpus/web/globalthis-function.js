export function run(t) {
  return new globalThis["Function"](t)(); // expect: js-dynamic-execution
}
