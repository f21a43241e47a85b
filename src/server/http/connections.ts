// What the guards know of each connection: the responses begun on it and not yet written, in order
// (a connection's responses finish in order), and whether it is closing after an answer.
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Duplex } from 'node:stream';

const begun = new WeakMap<Duplex, ServerResponse[]>();
/** Connections answered with an answer that closes them while the client may still send: what arrives is dropped. */
const closing = new WeakSet<Duplex>();

/** Notes `res` as begun on its connection; returns the responses begun before it and not yet written. */
export function noteResponse(res: ServerResponse): ServerResponse[] {
  const socket = res.req.socket;
  let list = begun.get(socket);
  if (!list) begun.set(socket, (list = []));
  while (list[0]?.writableFinished) list.shift();
  list.push(res);
  return list.slice(0, -1);
}

/** The responses begun on `socket` and not yet written. */
export function unfinishedResponses(socket: Duplex): ServerResponse[] {
  return (begun.get(socket) ?? []).filter((res) => !res.writableFinished);
}

/** The responses on the request's connection begun before its own, not yet written. */
export function responsesBefore(incoming: IncomingMessage): ServerResponse[] {
  const list = begun.get(incoming.socket) ?? [];
  const at = list.findIndex((res) => res.req === incoming);
  return list.slice(0, at < 0 ? list.length : at).filter((res) => !res.writableFinished);
}

/** Once `res` is written whole, or its connection closed. */
export const written = (res: ServerResponse) =>
  new Promise((resolve) => res.once('finish', resolve).once('close', resolve));

export const markClosing = (socket: Duplex) => closing.add(socket);
export const isClosing = (socket: Duplex) => closing.has(socket);
