// Which requests get a page: a GET or HEAD whose Accept header ranks HTML above JSON (a browser's).
// A client that names JSON first, sends `*/*` or no Accept at all gets the JSON it gets today.

/** The highest q this Accept header gives to any of `types`; -1 when it names none of them. */
function rank(accept: string, types: readonly string[]): number {
  let best = -1;
  for (const part of accept.split(',')) {
    const [type = '', ...params] = part.split(';');
    if (!types.includes(type.trim().toLowerCase())) continue;
    const q = params.map((param) => param.trim()).find((param) => param.startsWith('q='));
    const value = q === undefined ? 1 : Number(q.slice(2));
    if (Number.isFinite(value)) best = Math.max(best, value);
  }
  return best;
}

/** True when a browser asks: HTML ranked above zero and above JSON. */
export function wantsHtml(method: string, accept: string | undefined): boolean {
  if ((method !== 'GET' && method !== 'HEAD') || !accept) return false;
  const html = rank(accept, ['text/html', 'application/xhtml+xml']);
  return html > 0 && html > rank(accept, ['application/json']);
}
