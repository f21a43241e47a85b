// What the code supports, read as the incumbent client reads it: `[project] classifiers`, the
// frontend package among `[project] dependencies`, and `requires-comfyui` values.
import { fieldKey } from '../../shared/field-keys.js';
import { type Mapping, setBoth, setIfPresent } from './mapping.js';
import { isStringArray, P } from './types.js';

/** The incumbent's classifiers: `Operating System :: X` for these X, and `Environment :: GPU/NPU :: X`. */
const OS_CLASSIFIER = 'Operating System :: ';
const KNOWN_OS = ['Microsoft', 'POSIX', 'MacOS', 'OS Independent'];
const ACCELERATOR_CLASSIFIER = /^Environment :: ((?:GPU|NPU) :: .*)$/;
const KNOWN_ACCELERATORS = [
  'GPU :: NVIDIA CUDA',
  'GPU :: AMD ROCm',
  'GPU :: Intel Arc',
  'GPU :: Apple Metal',
  'NPU :: Huawei Ascend',
];
/**
 * A part of a `requires-comfyui` value as the incumbent client takes it (parts comma-separated): an
 * optional operator and an X.Y.Z version. It sends none for a value with another part (`>=v0.3.0`,
 * `0.3.x`), and a registry serving it cannot compare such a value with the host's version.
 */
const INCUMBENT_REQUIREMENT_PART = /^(?:(?:==|>=|<=|!=|~=|>|<|<>|=)\s*)?(?:\d+\.\d+\.\d+(?:-[a-zA-Z0-9]+)?)?$/;
export const isIncumbentRequirement = (value: string) =>
  value.split(',').every((part) => INCUMBENT_REQUIREMENT_PART.test(part.trim()));
export const notARequirement = (key: string, value: string) =>
  `${key} "${value}" is not a version requirement the registry can use (an operator and an X.Y.Z version, parts separated by commas: ">=0.3.0", ">=0.3.0, <0.4.0"); it is not sent, as the incumbent client sends none`;
/** The host's frontend, which the incumbent reads from `[project] dependencies` as the frontend requirement. */
const FRONTEND_DEPENDENCY = /^\s*comfyui[-_.]frontend[-_.]package(?![a-z0-9_.-])\s*(.*)$/i;

/**
 * The frontend requirement, as the incumbent reads it: a dependency on the host's frontend package,
 * which it then leaves out of the dependencies.
 */
export function mapDependencies(m: Mapping): void {
  const { manifest, proj, tool } = m;
  let dependencies = proj.dependencies;
  const frontendKey = fieldKey('supported_appui_frontend_version');
  if (tool[frontendKey] === undefined && isStringArray(dependencies)) {
    const match = dependencies.map((d) => FRONTEND_DEPENDENCY.exec(d)).find(Boolean);
    if (match) {
      dependencies = dependencies.filter((d) => !FRONTEND_DEPENDENCY.test(d));
      const requirement = match[1].trim();
      const key = `${P('dependencies')} (${match[0].trim()})`;
      // checked as requires-comfyui is: a value the registry cannot compare with the frontend's version is not sent
      if (requirement && !isIncumbentRequirement(requirement))
        manifest.warnings.push(notARequirement(key, requirement));
      else if (requirement) setBoth(m, 'supported_appui_frontend_version', requirement, key);
    }
  }
  setIfPresent(m, manifest.nodeVersion, 'dependencies', dependencies, 'node_version.dependencies', P('dependencies'));
}

/**
 * `[project] classifiers` → supported_os and supported_accelerators where `[tool.nodereg]` sets
 * neither, as the incumbent maps them; an entry it would refuse is left out with a warning (the
 * incumbent drops the whole list).
 */
export function mapClassifiers(m: Mapping): void {
  const { manifest, proj } = m;
  const { node } = manifest;
  const classifiers = proj.classifiers;
  if (classifiers === undefined) return;
  if (!isStringArray(classifiers)) return m.problem(P('classifiers'), 'must be an array of strings');
  const os: string[] = [];
  const accelerators: string[] = [];
  for (const classifier of classifiers) {
    if (classifier.startsWith(OS_CLASSIFIER)) {
      const value = classifier.slice(OS_CLASSIFIER.length);
      if (KNOWN_OS.some((prefix) => value.startsWith(prefix))) os.push(value);
      else
        manifest.warnings.push(
          `${P('classifiers')} "${classifier}" names no operating system the registry knows (it starts with one of ${KNOWN_OS.map((o) => `"${o}"`).join(', ')}); it is left out of supported_os`,
        );
      continue;
    }
    const accelerator = ACCELERATOR_CLASSIFIER.exec(classifier)?.[1];
    if (accelerator === undefined) continue;
    if (KNOWN_ACCELERATORS.includes(accelerator)) accelerators.push(accelerator);
    else
      manifest.warnings.push(
        `${P('classifiers')} "${classifier}" names no accelerator the registry knows (${KNOWN_ACCELERATORS.map((a) => `"Environment :: ${a}"`).join(', ')}); it is left out of supported_accelerators`,
      );
  }
  if (!node.supported_os && os.length) setBoth(m, 'supported_os', os, P('classifiers'));
  if (!node.supported_accelerators && accelerators.length)
    setBoth(m, 'supported_accelerators', accelerators, P('classifiers'));
}
