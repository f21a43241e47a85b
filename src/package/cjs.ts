// The CommonJS package of the file set, imported statically so that the bundle carries it:
// the CLI from a packed tarball then runs publish with Node alone, no node_modules (the CI recipe
// of docs/ci.md). (yauzl, needed only for a zip in the tree, is imported where it is used: the bundle
// carries a dynamic import of a package too.)
import ignoreModule from 'ignore';

export const ignore: typeof import('ignore') = ignoreModule;
