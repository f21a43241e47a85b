export async function run() {
  return import("https://cdn.example.invalid/x.js"); // expect: js-remote-code
}
