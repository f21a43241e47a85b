// The operator's own operations (DESIGN.md §16, the [operate] issue). Admins only.
import { op } from './operation.js';

/**
 * Gives up the claim an upload holds on a version's archive: the way out when the instance that held it
 * died during the put, before the claim runs out. An object it left at the version's key goes too.
 */
export const releaseArchiveClaim = op({
  id: 'releaseArchiveClaim',
  method: 'DELETE',
  path: '/nodes/{nodeId}/versions/{version}/claim',
  summary: "Release the claim a dead upload left on a version's archive, so that it can be uploaded again (admins)",
  auth: 'user',
  status: 204,
});

export const adminOperations = [releaseArchiveClaim];
