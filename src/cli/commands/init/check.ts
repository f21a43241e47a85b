import { NodeWritable, nodeId, publisherId } from '../../../contract/resources.js';
import { versionToSemver } from '../../../package/manifest.js';
import { invalidInput } from '../../errors.js';
import type { Options } from './entry.js';

const message = (result: { success: boolean; error?: { issues: { message: string }[] } }) =>
  result.success ? undefined : result.error!.issues.map((i) => i.message).join('; ');

export const splitTags = (list: string) =>
  list
    .split(',')
    .map((t) => t.trim())
    .filter(Boolean);

// Each field's rule is the contract's (or, for the version, the manifest's conversion).
export const check = {
  publisher: (v: string) => message(publisherId.safeParse(v)),
  name: (v: string) => message(nodeId.safeParse(v)),
  version: (v: string) => {
    const result = versionToSemver(v);
    return 'error' in result ? result.error : undefined;
  },
  displayName: (v: string) => message(NodeWritable.shape.name.safeParse(v)),
  description: (v: string) => message(NodeWritable.shape.description.safeParse(v)),
  tags: (v: string) => message(NodeWritable.shape.tags.safeParse(splitTags(v))),
  icon: (v: string) => message(NodeWritable.shape.icon.safeParse(v)),
};

/** Refuses the first flag whose value breaks its field's rule, before anything is asked or written. */
export function checkFlags(options: Options): void {
  for (const [field, value] of Object.entries(options) as [keyof Options, string][]) {
    const problem = check[field]?.(value);
    if (problem)
      throw invalidInput(`--${field.replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`)} "${value}": ${problem}`);
  }
}
