export function run(t) {
  return (0, eval)(t); // expect: js-dynamic-execution
}
