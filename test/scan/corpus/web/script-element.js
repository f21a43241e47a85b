export function run() {
  const s = document.createElement("script");
  s.src = "https://cdn.example.invalid/x.js"; // expect: js-remote-code
  document.head.appendChild(s);
}
