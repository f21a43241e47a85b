// A project to publish: the manifest, the file set, and the request, checked together so that
// validate, pack and publish report every problem at once (DESIGN.md §6).
import { formatSize } from '../contract/size.js';
import { ignore } from './cjs.js';
import { selectFiles, type SelectedFile, type SelectOptions } from './files.js';
import {
  addProblem,
  buildRequest,
  MANIFEST_FILE,
  readManifest,
  type Manifest,
  type ManifestOptions,
  type Problem,
  type PublishRequest,
} from './manifest.js';

export interface ProjectOptions extends ManifestOptions {
  /** Absolute paths never to pack (the pack's own output). */
  skip?: string[];
  /** Called with each file the listing finds, before the file set is complete. */
  onFile?: SelectOptions['onFile'];
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

export async function loadProject(dir: string, options: ProjectOptions = {}): Promise<Project> {
  const manifest = readManifest(dir, options);
  const fileSet = selectFiles(dir, {
    includes: manifest.includes,
    includesKey: manifest.includesKey,
    excludes: manifest.excludes,
    skip: options.skip,
    nodeId: manifest.nodeId,
    onFile: options.onFile,
  });
  const warnings = [...manifest.warnings, ...fileSet.warnings];
  const files = await leaveOutNodeArchives(fileSet.files, warnings);
  warnAboutArchives(files, warnings);
  for (const problem of fileSet.problems) addProblem(manifest, problem.key, problem.message);
  if (!files.length)
    addProblem(
      manifest,
      'files',
      'nothing to pack: every file is ignored (check .gitignore, .noderegignore, .comfyignore and excludes)',
    );
  resolveLicense(manifest, files, warnings);
  const request = await buildRequest(manifest);
  return { dir, manifest, request, files, problems: manifest.problems, warnings };
}

/**
 * Leaves out every zip that is an archive of a node (a pyproject.toml at its root): an earlier pack
 * under any name (`--out dist/x.zip`, an id since renamed) or the incumbent's, wherever it lies.
 */
async function leaveOutNodeArchives(files: SelectedFile[], warnings: string[]): Promise<SelectedFile[]> {
  const kept: SelectedFile[] = [];
  for (const file of files) {
    if (/\.zip$/i.test(file.path) && (await holdsManifest(file.abs))) {
      warnings.push(
        `${file.path} (${formatSize(file.size)}) is left out: it is an archive of a node (it holds a pyproject.toml at its root), such as an earlier pack`,
      );
    } else {
      kept.push(file);
    }
  }
  return kept;
}

/** Whether the zip at `path` has a root `pyproject.toml`; false for anything that is not a readable zip. */
async function holdsManifest(path: string): Promise<boolean> {
  // Loaded only when the tree holds a zip: most nodes have none.
  const { default: yauzl } = await import('yauzl');
  let zip: import('yauzl').ZipFile;
  try {
    zip = await yauzl.openPromise(path, { lazyEntries: true, autoClose: false });
  } catch {
    return false;
  }
  try {
    for await (const entry of zip.eachEntry()) if (entry.fileName === 'pyproject.toml') return true;
    return false;
  } catch {
    return false;
  } finally {
    zip.close();
  }
}

const ARCHIVE_NAME = /\.(zip|tar|tgz|gz|bz2|xz|zst|7z|rar|whl)$/i;
const LARGE_ARCHIVE = 1024 * 1024;

/** Names every other archive over 1 MiB that would ship: often a build left behind. */
function warnAboutArchives(files: SelectedFile[], warnings: string[]): void {
  for (const file of files) {
    if (ARCHIVE_NAME.test(file.path) && file.size > LARGE_ARCHIVE) {
      warnings.push(
        `${file.path} (${formatSize(file.size)}) is an archive and ships in this node; if it should not, leave it out with .noderegignore or [tool.nodereg] excludes`,
      );
    }
  }
}

const LICENSE_NAME = /^(licen[cs]e|copying)/i;

/**
 * `[project] license`: `{file = …}` gives that path; an SPDX string gives the path of the file named
 * by `license-files`, or of a root LICENSE… or COPYING… file, else the string. A `{file = …}` the
 * archive lacks is a warning: the incumbent client publishes its path all the same, and its `node init`
 * writes `{ file = "LICENSE" }` whether there is one or not, so such projects publish unchanged.
 */
function resolveLicense(manifest: Manifest, files: SelectedFile[], warnings: string[]): void {
  const spec = manifest.license;
  const rootLicense = files.find((f) => !f.path.includes('/') && LICENSE_NAME.test(f.path));
  if (!spec) {
    if (manifest.problems.some((p) => p.key === MANIFEST_FILE || p.key === '[project] license')) return; // unread, or broken already
    // Not required (the registry keeps a node's license when none is sent), but a new node would have none.
    const write = rootLicense
      ? `license = { file = "${rootLicense.path}" } (the file is in the archive)`
      : 'license = "MIT" (your license\'s SPDX expression) or license = { file = "LICENSE" }';
    warnings.push(
      `[project] license is not set: a new node is published without a license (a published one keeps its own); add ${write} to [project]`,
    );
    return;
  }
  const packed = new Set(files.map((f) => f.path));
  if (spec.kind === 'file') {
    manifest.node.license = spec.path;
    if (!packed.has(spec.path))
      warnings.push(
        `[project] license: file "${spec.path}" is not in the archive (it does not exist or is ignored); the registry will name a license file that users cannot read (add the file, or write an SPDX expression such as license = "MIT")`,
      );
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
    addProblem(
      manifest,
      '[project] license-files',
      `${spec.files.map((f) => `"${f}"`).join(', ')} matches no file in the archive`,
    );
    return;
  }
  manifest.node.license = rootLicense ? rootLicense.path : spec.value;
}
