// The page's only stylesheet and script, served by us (the CSP allows no other origin and no inline
// code). Kept as strings in the bundle: no file to copy, no build step.
import { createHash } from 'node:crypto';

const CSS = `
:root{color-scheme:light dark;--fg:#1d1d1f;--bg:#fff;--muted:#5f6368;--line:#d0d4d9;--accent:#0b57d0;--warn:#9a5b00;--bad:#b3261e}
@media (prefers-color-scheme:dark){:root{--fg:#e8eaed;--bg:#17181a;--muted:#a0a4a8;--line:#3c4043;--accent:#8ab4f8;--warn:#f6c26b;--bad:#f28b82}}
*{box-sizing:border-box}
body{margin:0;font:16px/1.5 system-ui,sans-serif;color:var(--fg);background:var(--bg)}
header,main,footer{max-width:60rem;margin:0 auto;padding:.75rem 1rem}
header{display:flex;gap:1rem;align-items:center;border-bottom:1px solid var(--line);flex-wrap:wrap}
header .brand{font-weight:700;margin-right:auto}
a{color:var(--accent)}
a:focus-visible,button:focus-visible,input:focus-visible,select:focus-visible,textarea:focus-visible{outline:3px solid var(--accent);outline-offset:2px}
.muted{color:var(--muted)}
form.search{display:flex;gap:.5rem;flex-wrap:wrap;align-items:end;margin:1rem 0}
form.search label,form.stack label{display:flex;flex-direction:column;font-size:.875rem}
form.stack{display:flex;flex-direction:column;gap:.5rem;max-width:36rem}
input,select,textarea,button{font:inherit;padding:.35rem .5rem;border:1px solid var(--line);border-radius:4px;background:var(--bg);color:var(--fg)}
button{cursor:pointer;background:var(--accent);color:var(--bg);border-color:var(--accent)}
button.plain{background:none;color:var(--accent)}
table{border-collapse:collapse;width:100%}
th,td{text-align:left;padding:.35rem .5rem;border-bottom:1px solid var(--line);vertical-align:top}
ul.results{list-style:none;padding:0}
ul.results li{padding:.75rem 0;border-bottom:1px solid var(--line)}
.tag{display:inline-block;border:1px solid var(--line);border-radius:1rem;padding:0 .5rem;margin:.1rem;font-size:.8rem}
.status-NodeVersionStatusFlagged,.status-NodeVersionStatusPending{color:var(--warn)}
.status-NodeVersionStatusBanned,.status-NodeVersionStatusDeleted{color:var(--bad)}
pre,code{font-family:ui-monospace,monospace;font-size:.9rem}
.command{display:flex;gap:.5rem;align-items:center;margin:.25rem 0}
.command code{padding:.25rem .5rem;border:1px solid var(--line);border-radius:4px;overflow-x:auto;white-space:nowrap}
.severity-critical,.severity-high{color:var(--bad);font-weight:600}
.severity-medium{color:var(--warn)}
.notice{border-left:4px solid var(--accent);padding:.5rem 1rem}
.error{border-left:4px solid var(--bad);padding:.5rem 1rem}
`;

const JS = `
'use strict';
document.querySelectorAll('button[data-copy]').forEach(function (button) {
  button.hidden = false;
  button.addEventListener('click', function () {
    var target = document.getElementById(button.getAttribute('data-copy'));
    if (!target || !navigator.clipboard) return;
    navigator.clipboard.writeText(target.textContent).then(function () {
      button.textContent = 'Copied';
      setTimeout(function () { button.textContent = 'Copy'; }, 1500);
    });
  });
});
`;

interface Asset {
  path: string;
  type: string;
  body: string;
  etag: string;
}

const asset = (name: string, extension: string, type: string, body: string): Asset => {
  const hash = createHash('sha256').update(body).digest('base64url').slice(0, 12);
  // The hash is in the path: a page names the current one, and a cache may keep it for a year.
  return { path: `/web/assets/${name}-${hash}.${extension}`, type, body, etag: `"${hash}"` };
};

export const STYLESHEET = asset('site', 'css', 'text/css; charset=utf-8', CSS);
export const SCRIPT = asset('site', 'js', 'text/javascript; charset=utf-8', JS);
