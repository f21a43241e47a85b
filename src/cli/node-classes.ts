// The node classes a node directory defines, read as the registry reads them at upload (the same
// parser and extraction, never running the code), and the version check the host's manager needs.
import { readFileSync } from 'node:fs';
import type { Extraction } from '../scan/node-classes/extract.js';
import type { Project } from '../package/project.js';

/** The classes the project's Python files (those pack would ship) define. */
export async function projectClasses(project: Project): Promise<Extraction> {
  const [{ extractNodeClasses }, { scanner }] = await Promise.all([
    import('../scan/node-classes/extract.js'),
    import('../scan/run.js'),
  ]);
  const parser = await scanner();
  const files = new Map(
    project.files
      .filter((file) => file.path.endsWith('.py'))
      .map((file) => [file.path, readFileSync(file.abs, 'utf8')]),
  );
  return extractNodeClasses(files, (text) => parser.parsePython(text), project.request?.nodeId ?? '');
}

/** One line per class, or why none was found. */
export function classesText(extraction: Extraction): string {
  if (extraction.status !== 'success') return `node classes: none found (${extraction.status}: ${extraction.reason})`;
  const lines = extraction.classes.map(
    (found) =>
      `  ${found.name}${found.displayName && found.displayName !== found.name ? ` (${found.displayName})` : ''}`,
  );
  return `node classes (${extraction.classes.length}):\n${lines.join('\n')}`;
}

/**
 * The host's manager reads an installed pack's version from its pyproject.toml as dotted integers: a
 * version with a pre-release (1.4.0-rc.1) shows there as "unknown". Undefined for a plain X.Y.Z.
 */
export function managerVersionWarning(version: string): string | undefined {
  if (/^\d+\.\d+\.\d+$/.test(version)) return undefined;
  return `version ${version} is not plain X.Y.Z: the host's manager shows an installed copy of it as "unknown" (it reads dotted integers only)`;
}
