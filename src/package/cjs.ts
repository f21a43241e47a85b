// The CommonJS packages of the file set, imported statically so that the esbuild bundle carries them:
// the CLI from a packed tarball then runs publish with Node alone, no node_modules (the README's CI
// recipe).
import ignoreModule from 'ignore';
import yauzlModule from 'yauzl';

export const ignore: typeof import('ignore') = ignoreModule;
/** Read only to recognise an earlier archive of a node in the tree (project.ts). */
export const yauzl: typeof import('yauzl') = yauzlModule;
