// The URL a server prints on stdout once it listens (`nodereg registry listening on URL`, and the bench's
// floor servers' `listening on URL`): read by the benchmarks.

/** Resolves to the URL of `child`'s "listening on URL" line; rejects if it exits first, or (`withinMs`) takes longer. */
export function listeningUrl(child, withinMs) {
  return new Promise((resolveUrl, reject) => {
    let out = '';
    const timer = withinMs && setTimeout(() => reject(new Error(`did not listen within ${withinMs} ms`)), withinMs);
    child.stdout.on('data', (chunk) => {
      out += chunk;
      const match = /listening on (\S+)/.exec(out);
      if (match) clearTimeout(timer), resolveUrl(match[1]);
    });
    child.once(
      'exit',
      (code) => (clearTimeout(timer), reject(new Error(`exited (${code}) before listening: ${out.slice(-500)}`))),
    );
  });
}
