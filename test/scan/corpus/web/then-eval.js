export function run(url) {
  return fetch(url).then((r) => r.text()).then(eval); // expect: js-dynamic-execution
}
