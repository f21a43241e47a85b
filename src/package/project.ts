// A project to publish: the manifest, the file set, and the request, checked together so that
// validate, pack and publish report every problem at once (DESIGN.md §6).
import { ignore } from './cjs.js';
import { selectFiles, type SelectedFile } from './files.js';
import { addProblem, buildRequest, readManifest, type Manifest, type ManifestOptions, type Problem, type PublishRequest } from './manifest.js';

export interface ProjectOptions extends ManifestOptions {
  /** Absolute paths never to pack (the pack's own output). */
  skip?: string[];
}

export interface Project {
  dir: string;
  manifest: Manifest;
  /** Present when there is no problem. */
  request?: PublishRequest;
  files: SelectedFile[];
  problems: Problem[];
  warnings: string[];
}

export function loadProject(dir: string, options: ProjectOptions = {}): Project {
  const manifest = readManifest(dir, options);
  const fileSet = selectFiles(dir, {
    includes: manifest.includes,
    excludes: manifest.excludes,
    skip: options.skip,
    nodeId: manifest.nodeId,
  });
  for (const problem of fileSet.problems) addProblem(manifest, problem.key, problem.message);
  if (!fileSet.files.length) addProblem(manifest, 'files', 'nothing to pack: every file is ignored (check .gitignore, .noderegignore and excludes)');
  resolveLicense(manifest, fileSet.files);
  const request = buildRequest(manifest);
  return { dir, manifest, request, files: fileSet.files, problems: manifest.problems, warnings: [...manifest.warnings, ...fileSet.warnings] };
}

const LICENSE_NAME = /^(licen[cs]e|copying)/i;

/**
 * `[project] license`: `{file = …}` gives that path; an SPDX string gives the path of the file named
 * by `license-files`, or of a root LICENSE… or COPYING… file, else the string. A path must be a file
 * that goes into the archive.
 */
function resolveLicense(manifest: Manifest, files: SelectedFile[]): void {
  const spec = manifest.license;
  if (!spec) return;
  const packed = new Set(files.map((f) => f.path));
  if (spec.kind === 'file') {
    if (packed.has(spec.path)) manifest.node.license = spec.path;
    else addProblem(manifest, '[project] license', `file "${spec.path}" is not in the archive (it does not exist or is ignored)`);
    return;
  }
  for (const pattern of spec.files) {
    const matcher = ignore({ ignorecase: false }).add(pattern.startsWith('/') ? pattern : `/${pattern}`);
    const match = files.find((f) => matcher.ignores(f.path));
    if (match) {
      manifest.node.license = match.path;
      return;
    }
  }
  if (spec.files.length) {
    addProblem(manifest, '[project] license-files', `${spec.files.map((f) => `"${f}"`).join(', ')} matches no file in the archive`);
    return;
  }
  const rootLicense = files.find((f) => !f.path.includes('/') && LICENSE_NAME.test(f.path));
  manifest.node.license = rootLicense ? rootLicense.path : spec.value;
}
