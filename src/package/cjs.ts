// The CommonJS packages of the packer, loaded with require: importing a CommonJS package from ESM
// makes Node scan its source for export names first, which cost ~70 ms each for these two on the
// benchmark machine (bench/results.md, publish), against ~15 ms through require.
import { createRequire } from 'node:module';

const require = createRequire(import.meta.url);

export const ignore: typeof import('ignore') = require('ignore');
export const yazl: typeof import('yazl') = require('yazl');
export const yauzl: typeof import('yauzl') = require('yauzl');
