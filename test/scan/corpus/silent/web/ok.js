// eval(t) and new Function(t) are never used; see "window['eval']"
export function run(fn, obj) {
  setTimeout(fn, 10);
  setTimeout(() => fn(), 10);
  const name = obj.constructor.name;
  const mod = import("./local.js");
  const s = document.createElement("script");
  s.src = "./lib/local.js";
  return fetch("/api").then((r) => r.json()).then(console.log), name, mod;
}
