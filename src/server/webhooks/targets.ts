// Where a webhook may be sent (issue 36): http(s) only, and, unless `serve --webhook-allow-private`,
// never to a loopback, private, link-local or otherwise internal address, so that a publisher's owner
// cannot make the registry POST into the network it runs in.
import { type LookupAddress, lookup } from 'node:dns';
import { BlockList, isIP, type LookupFunction } from 'node:net';

const INTERNAL = new BlockList();
for (const [net, prefix] of [
  ['0.0.0.0', 8],
  ['10.0.0.0', 8],
  ['100.64.0.0', 10],
  ['127.0.0.0', 8],
  ['169.254.0.0', 16],
  ['172.16.0.0', 12],
  ['192.168.0.0', 16],
  ['198.18.0.0', 15],
  ['224.0.0.0', 3],
] as const)
  INTERNAL.addSubnet(net, prefix, 'ipv4');
for (const [net, prefix] of [
  ['::', 127],
  ['fc00::', 7],
  ['fe80::', 10],
  ['ff00::', 8],
] as const)
  INTERNAL.addSubnet(net, prefix, 'ipv6');

const internal = (address: string) => INTERNAL.check(address, isIP(address) === 6 ? 'ipv6' : 'ipv4');
const bare = (hostname: string) => hostname.replace(/^\[|\]$/g, '');

/** Why `url` may not be a webhook's at creation (a literal internal address or localhost), or undefined. */
export function refusedTarget(url: string, allowPrivate: boolean): string | undefined {
  const { protocol, hostname } = new URL(url);
  if (protocol !== 'http:' && protocol !== 'https:') return 'a webhook URL must be http:// or https://';
  if (allowPrivate) return undefined;
  const host = bare(hostname);
  if (host === 'localhost' || host.endsWith('.localhost') || (isIP(host) && internal(host)))
    return `${host} is an internal address: webhooks go to public receivers unless the registry runs with --webhook-allow-private`;
  return undefined;
}

/**
 * The host lookup for a delivery's own connection: it refuses an internal answer (unless allowed), so
 * the address checked is the address connected to, whatever the name resolves to later.
 */
export function deliveryLookup(allowPrivate: boolean, resolve: LookupFunction = lookup): LookupFunction {
  if (allowPrivate) return resolve;
  return (hostname, options, callback) =>
    resolve(hostname, { ...options, all: true }, (error, answers) => {
      if (error) return callback(error, '', 4);
      const addresses = answers as unknown as LookupAddress[];
      if (addresses.length === 0) return callback(new Error(`${hostname} does not resolve`), '', 4);
      const inside = addresses.find((a) => internal(a.address));
      if (inside)
        return callback(
          new Error(`${hostname} resolves to the internal address ${inside.address} (--webhook-allow-private)`),
          '',
          4,
        );
      if (options.all) return (callback as unknown as (e: null, all: LookupAddress[]) => void)(null, addresses);
      callback(null, addresses[0]!.address, addresses[0]!.family);
    });
}
