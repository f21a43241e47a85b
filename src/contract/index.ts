export * from './errors.js';
export * from './limits.js';
export * from './operation.js';
export * from './proxy.js';
export * from './registry.js';
export * from './resources.js';
export { allOperations, openapiDocument } from './openapi.js';
export * from './size.js';
export * from './field-keys.js';
