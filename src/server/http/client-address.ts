// The address a request came from, as the rate limit and the download count see it.
import type { HttpBindings } from '@hono/node-server';
import type { Context } from 'hono';

/** The peer's address ('unknown' when the socket has none: closed, or no Node request behind the context). */
export function clientAddress(c: Context): string {
  return (c.env as HttpBindings | undefined)?.incoming?.socket.remoteAddress ?? 'unknown';
}
