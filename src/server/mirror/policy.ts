// The operator's filter of upstream versions (`serve --upstream-policy FILE`, TOML): versions younger
// than N days held back, node ids and version ranges blocked, versions whose declared dependencies pin
// a listed bad package version blocked, and an allow-list of publishers. A version the policy holds
// back is absent from every answer of the mirror; the admin read of the mirror says why.
import { readFileSync } from 'node:fs';
import semver from 'semver';
import { parse } from 'smol-toml';
import * as z from 'zod';
import type { MirrorEntry } from './cache.js';
import type { UpstreamVersion } from './upstream.js';

const Advisory = z.object({
  package: z.string().min(1).max(200),
  versions: z.array(z.string().min(1).max(100)).min(1).max(1000),
  reason: z.string().max(1000).optional(),
});

export const MirrorPolicy = z.strictObject({
  hold: z.strictObject({ days: z.number().min(0).max(3650) }).optional(),
  block: z
    .array(
      z.strictObject({
        node: z.string().min(1).max(100),
        /** A semver range (`>=1.2.0 <1.3.0`); the whole node when absent. */
        versions: z.string().min(1).max(500).optional(),
        reason: z.string().max(1000).optional(),
      }),
    )
    .max(10_000)
    .default([]),
  advisory: z.array(Advisory).max(10_000).default([]),
  publishers: z.strictObject({ allow: z.array(z.string().min(1).max(64)).max(10_000) }).optional(),
});
export type MirrorPolicy = z.output<typeof MirrorPolicy>;

/** Reads and checks a policy file; the error names the file and the field to fix. */
export function loadPolicy(path: string): MirrorPolicy {
  let data: unknown;
  try {
    data = parse(readFileSync(path, 'utf8'));
  } catch (error) {
    throw new Error(`the upstream policy ${path} cannot be read: ${(error as Error).message}`);
  }
  const parsed = MirrorPolicy.safeParse(data);
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    throw new Error(`the upstream policy ${path} is not valid: ${issue.path.join('.') || '(top)'}: ${issue.message}`);
  }
  for (const rule of parsed.data.block)
    if (rule.versions !== undefined && semver.validRange(rule.versions) === null)
      throw new Error(
        `the upstream policy ${path} is not valid: block of ${rule.node}: "${rule.versions}" is not a semver range`,
      );
  return parsed.data;
}

const DAY_MS = 24 * 60 * 60 * 1000;

/** `name==1.2.3` (also `===`), a pip requirement that pins one version: the package's normalised name and the version. */
function pinned(requirement: string): { name: string; version: string } | undefined {
  const match = /^\s*([A-Za-z0-9][A-Za-z0-9._-]*)\s*(?:\[[^\]]*\])?\s*===?\s*([A-Za-z0-9.+!_-]+)\s*(?:;.*)?$/.exec(
    requirement,
  );
  if (!match) return undefined;
  return { name: match[1]!.toLowerCase().replace(/[-_.]+/g, '-'), version: match[2]! };
}

/** The advisory entry a requirement pins, if any. */
export function badPin(policy: MirrorPolicy, requirements: readonly string[]): string | undefined {
  for (const requirement of requirements) {
    const pin = pinned(requirement);
    if (!pin) continue;
    const advisory = policy.advisory.find(
      (a) => a.package.toLowerCase().replace(/[-_.]+/g, '-') === pin.name && a.versions.includes(pin.version),
    );
    if (advisory)
      return `it pins ${pin.name}==${pin.version}, listed as bad${advisory.reason ? ` (${advisory.reason})` : ''}`;
  }
  return undefined;
}

/** Why the policy holds this version back, or undefined when it lets it through. */
export function versionVerdict(policy: MirrorPolicy, entry: MirrorEntry, version: UpstreamVersion): string | undefined {
  const nodeId = entry.id.toLowerCase();
  for (const rule of policy.block) {
    if (rule.node.toLowerCase() !== nodeId) continue;
    if (rule.versions === undefined) return `node ${entry.id} is blocked${rule.reason ? `: ${rule.reason}` : ''}`;
    if (semver.satisfies(version.version, rule.versions, { includePrerelease: true }))
      return `versions ${rule.versions} of ${entry.id} are blocked${rule.reason ? `: ${rule.reason}` : ''}`;
  }
  const publisher = entry.node.publisher?.id;
  if (policy.publishers && !(publisher && policy.publishers.allow.includes(publisher)))
    return `publisher ${publisher ?? '(none)'} is not on the allow-list`;
  if (policy.hold) {
    const created = version.createdAt ? Date.parse(version.createdAt) : Number.NaN;
    if (Number.isNaN(created))
      return `held back: no publication date, and the policy holds back versions younger than ${policy.hold.days} days`;
    const age = Date.now() - created;
    if (age < policy.hold.days * DAY_MS)
      return `held back: published ${new Date(created).toISOString()}, younger than ${policy.hold.days} days`;
  }
  const bad = badPin(policy, version.dependencies ?? []);
  if (bad) return `blocked: ${bad}`;
  const inArchive = badPin(policy, entry.archives[version.version]?.requirements ?? []);
  return inArchive ? `blocked: its requirements.txt ${inArchive.replace(/^it /, '')}` : undefined;
}
