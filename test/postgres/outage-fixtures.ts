// What the outage files share: a registry with a node to read, review and upload to, and the answer a
// request gets while a backend is out of reach.
import { expect } from 'vitest';
import type { TestServer } from '../helpers.js';
import {
  call,
  createPublisher,
  createUser,
  expectError,
  makeZip,
  publish,
  publishAndUpload,
} from '../server/fixtures.js';

/** Alice's publisher with node kept-node: 1.0.0 uploaded, 1.1.0 published (its upload URL and archive not sent yet). */
export async function registryWithNode(server: TestServer) {
  const alice = await createUser(server, 'alice');
  await createPublisher(server, alice, 'alice-co');
  await publishAndUpload(server, alice.token, 'alice-co', 'kept-node', '1.0.0');
  const pending = await publish(server, alice.token, 'alice-co', 'kept-node', '1.1.0');
  // alice, its publisher's owner, may not review her node: a reader reviews it
  const reader = await createUser(server, 'reader');
  return { alice, reader, pending, zip: await makeZip({ 'node.py': '# 1.1.0\n' }) };
}

/** A 503 `unavailable` with a Retry-After, that does not say which backend is out of reach. */
export function expectUnavailable(reply: Awaited<ReturnType<typeof call>>) {
  expectError(reply, 503, 'unavailable');
  expect(reply.headers.get('retry-after')).toMatch(/^\d+$/);
  expect(reply.text).not.toMatch(/postgres:|s3:/); // which backend, and where, is for the log only
}
