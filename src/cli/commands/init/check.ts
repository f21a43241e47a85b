import { checkArgument } from '../../../contract/arguments.js';
import { checkNodeField } from '../../../contract/node-fields.js';
import { versionToSemver } from '../../../package/manifest.js';
import { invalidInput } from '../../errors.js';
import type { Options } from './entry.js';

export const splitTags = (list: string) =>
  list
    .split(',')
    .map((t) => t.trim())
    .filter(Boolean);

// Each field's rule is the contract's (or, for the version, the manifest's conversion), checked by its
// generated check and worded as the server words the same field.
const idRule = (rule: 'NodeId' | 'PublisherId') => (v: string) => {
  const checked = checkArgument(rule, v);
  return 'refusal' in checked ? checked.refusal.message : undefined;
};

export const check = {
  publisher: idRule('PublisherId'),
  name: idRule('NodeId'),
  version: (v: string) => {
    const result = versionToSemver(v);
    return 'error' in result ? result.error : undefined;
  },
  displayName: (v: string) => checkNodeField('NodeName', v)?.message,
  description: (v: string) => checkNodeField('NodeDescription', v)?.message,
  tags: (v: string) => checkNodeField('NodeTags', splitTags(v))?.message,
  icon: (v: string) => checkNodeField('NodeIcon', v)?.message,
};

/** Refuses the first flag whose value breaks its field's rule, before anything is asked or written. */
export function checkFlags(options: Options): void {
  for (const [field, value] of Object.entries(options) as [keyof Options, string][]) {
    const problem = check[field]?.(value);
    if (problem)
      throw invalidInput(`--${field.replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`)} "${value}": ${problem}`);
  }
}
