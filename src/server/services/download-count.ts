// Downloads count once per client, node and version a day, so that fetching one archive again and
// again does not drive `sort=downloads`.
import { createHmac } from 'node:crypto';
import type { DownloadSeen } from '../store/registry-store.js';

/**
 * Today's (UTC) record of this client's download of this version. The key is an HMAC under a server
 * secret, so the database never holds a client's address.
 */
export function downloadSeen(
  secret: Buffer,
  address: string,
  nodeId: string,
  version: string,
  at = new Date(),
): DownloadSeen {
  const key = createHmac('sha256', secret)
    .update(`download\0${address}\0${nodeId.toLowerCase()}\0${version}`)
    .digest('hex')
    .slice(0, 32);
  return { day: at.toISOString().slice(0, 10), key };
}
