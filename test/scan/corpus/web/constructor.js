export function run(t) {
  return (function () {}).constructor(t)(); // expect: js-dynamic-execution
}
