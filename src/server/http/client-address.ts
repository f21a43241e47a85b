// The address a request came from, as the access log, the rate limit and the download count see it:
// the peer's, or behind proxies the operator trusts (`serve --trust-proxy`), the nearest address in
// X-Forwarded-For that is not one of them.
import { BlockList, isIPv4, isIPv6 } from 'node:net';
import type { HttpBindings } from '@hono/node-server';
import type { Context, MiddlewareHandler } from 'hono';

/** A socket's IPv4 peer as IPv4 ('::ffff:10.0.0.7' → '10.0.0.7'), so one CIDR list matches both forms. */
const plain = (address: string) =>
  address.startsWith('::ffff:') && isIPv4(address.slice(7)) ? address.slice(7) : address;

const family = (address: string): 'ipv4' | 'ipv6' | undefined =>
  isIPv4(address) ? 'ipv4' : isIPv6(address) ? 'ipv6' : undefined;

/** `--trust-proxy 10.0.0.0/8,::1,192.168.1.10`: addresses and CIDR blocks; throws naming an entry that is neither. */
export function trustedProxies(entries: string[]): BlockList {
  const list = new BlockList();
  for (const entry of entries) {
    const [address, prefix, extra] = entry.trim().split('/');
    const kind = family(address);
    const bits = prefix === undefined ? undefined : Number(prefix);
    const maxBits = kind === 'ipv4' ? 32 : 128;
    if (
      !kind ||
      extra !== undefined ||
      (bits !== undefined && !(Number.isInteger(bits) && bits >= 0 && bits <= maxBits))
    )
      throw new Error(`"${entry.trim()}" is neither an IP address nor a CIDR block such as 10.0.0.0/8`);
    if (bits === undefined) list.addAddress(address, kind);
    else list.addSubnet(address, bits, kind);
  }
  return list;
}

/**
 * The client's address: the peer's, unless the peer is a trusted proxy; then X-Forwarded-For read from
 * the right, past every trusted hop, so a client cannot name itself by writing the header first.
 */
export function addressBehind(peer: string, forwardedFor: string | undefined, trusted: BlockList | undefined): string {
  const isTrusted = (address: string) => {
    const kind = family(address);
    return kind !== undefined && trusted !== undefined && trusted.check(address, kind);
  };
  let address = plain(peer);
  if (!forwardedFor) return address;
  const hops = forwardedFor.split(',').map((hop) => plain(hop.trim()));
  while (isTrusted(address) && hops.length > 0) {
    const next = hops.pop()!;
    if (!family(next)) break; // not an address: the chain cannot be followed further
    address = next;
  }
  return address;
}

type Addressed = { Variables: { clientAddress?: string } };

/** Finds each request's client address once, before anything logs or counts it. */
export function resolveClientAddress(trusted: BlockList | undefined): MiddlewareHandler<Addressed> {
  return (c, next) => {
    const peer = (c.env as HttpBindings | undefined)?.incoming?.socket.remoteAddress ?? 'unknown';
    c.set('clientAddress', trusted ? addressBehind(peer, c.req.header('x-forwarded-for'), trusted) : plain(peer));
    return next();
  };
}

/** The request's client address ('unknown' when the socket had none: closed, or no Node request behind the context). */
export function clientAddress(c: Context): string {
  const found = (c as Context<Addressed>).get('clientAddress');
  return found ?? plain((c.env as HttpBindings | undefined)?.incoming?.socket.remoteAddress ?? 'unknown');
}
