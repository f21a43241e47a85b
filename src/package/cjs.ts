// The CommonJS packages of the file set, loaded with require: importing a CommonJS package from ESM
// makes Node scan its source for export names first (~70 ms on the benchmark machine, against ~15 ms
// through require) when the code runs unbundled, as in the tests.
import { createRequire } from 'node:module';

const require = createRequire(import.meta.url);

export const ignore: typeof import('ignore') = require('ignore');
/** Read only to recognise an earlier archive of a node in the tree (project.ts). */
export const yauzl: typeof import('yauzl') = require('yauzl');
