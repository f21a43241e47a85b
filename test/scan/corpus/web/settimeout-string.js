export function run(t) {
  setTimeout("run2(" + t + ")", 10); // expect: js-dynamic-execution
}
