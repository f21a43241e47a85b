// The registry's resources and request bodies, one file per aggregate under resources/.
export {
  HOST_APP_ALIASES,
  isoDate,
  nodeId,
  pageLimit,
  pageNumber,
  publisherId,
  queryInteger,
  semver,
  sha256Hex,
} from './resources/fields.js';
export * from './resources/node.js';
export * from './resources/node-version.js';
export * from './resources/publisher.js';
export * from './resources/publish.js';
export * from './resources/accounts.js';
export * from './resources/registry-info.js';
export * from './resources/ai-tasks.js';
