// Stand-ins for the third parties of the AI proxy, as real HTTP servers on 127.0.0.1: an AI provider
// (forward mode) and a webhook receiver (callbacks). They record every request they get.
import { createServer, type IncomingHttpHeaders, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface Recorded {
  method: string;
  path: string;
  headers: IncomingHttpHeaders;
  /** The raw body, exactly as received (signatures are checked over it). */
  raw: string;
  json: unknown;
}

/** What a stand-in answers: a status and a JSON body, or never answering at all. */
export type Answer = { status: number; json?: unknown; text?: string; headers?: Record<string, string> } | 'hang';

export interface StandIn {
  url: string;
  requests: Recorded[];
  close(): Promise<void>;
}

/** Starts a server on 127.0.0.1 answering each request with `respond(request, index)`. */
export async function startStandIn(
  respond: (request: Recorded, index: number) => Answer | Promise<Answer>,
): Promise<StandIn> {
  const requests: Recorded[] = [];
  const hanging = new Set<ServerResponse>();
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', async () => {
      const raw = Buffer.concat(chunks).toString('utf8');
      let json: unknown;
      try {
        json = raw ? JSON.parse(raw) : undefined;
      } catch {
        json = undefined;
      }
      const recorded: Recorded = { method: req.method ?? '', path: req.url ?? '', headers: req.headers, raw, json };
      requests.push(recorded);
      const answer = await respond(recorded, requests.length - 1);
      if (answer === 'hang') {
        hanging.add(res);
        return;
      }
      const body = answer.text ?? (answer.json === undefined ? '' : JSON.stringify(answer.json));
      res.writeHead(answer.status, {
        'content-type': answer.text ? 'text/plain' : 'application/json',
        ...answer.headers,
      });
      res.end(body);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    close: () =>
      new Promise((resolve) => {
        for (const res of hanging) res.destroy();
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** Resolves once `check` returns a value (not undefined), checking every 20 ms; fails after `limitMs`. */
export async function eventually<T>(
  check: () => T | undefined | Promise<T | undefined>,
  what: string,
  limitMs = 15_000,
): Promise<T> {
  const deadline = Date.now() + limitMs;
  for (;;) {
    const value = await check();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`gave up waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}
