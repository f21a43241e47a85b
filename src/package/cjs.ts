// The CommonJS package of the file set. A static import, so the esbuild bundle carries it: the CLI
// from a packed tarball then runs publish with Node alone, no node_modules (the README's CI recipe).
import ignoreModule from 'ignore';

export const ignore: typeof import('ignore') = ignoreModule;
