// Versions as publishers write them → the registry's version (DESIGN.md §6, §11). Free of zod, so
// that the CLI and the server share it without loading the schemas.

// At most 15 digits: semver (and a JavaScript number) holds no integer above 2^53 − 1, and a version
// it cannot parse broke every list that sorts versions (docs/decisions.md).
const NUMBER = '0|[1-9]\\d{0,14}';
const PRE_ID = '0|[1-9]\\d*|\\d*[a-zA-Z-][0-9a-zA-Z-]*';
const BUILD_ID = '[0-9a-zA-Z-]+';

/**
 * What the registry accepts: a semantic version whose minor and patch may be left out (`1`, `1.0`),
 * with an optional leading `v`, pre-release and build metadata.
 */
export const VERSION_INPUT_PATTERN =
  `^v?(${NUMBER})(?:\\.(${NUMBER}))?(?:\\.(${NUMBER}))?` +
  `(?:-((?:${PRE_ID})(?:\\.(?:${PRE_ID}))*))?` +
  `(?:\\+(${BUILD_ID}(?:\\.${BUILD_ID})*))?$`;
const VERSION_INPUT = new RegExp(VERSION_INPUT_PATTERN);

export interface NormalizedVersion {
  /** `X.Y.Z` or `X.Y.Z-pre`: how the registry stores and names the version. */
  version: string;
  /** The build metadata that was dropped (`+…` without the plus), if any. */
  build?: string;
}

/**
 * `1` → `1.0.0`, `1.0` → `1.0.0`, `v1.2` → `1.2.0`, `1.2.3-rc.1` as it is. Build metadata is
 * dropped: semver gives it no precedence, so `1.0.0+a` and `1.0.0+b` are one version to the
 * registry (docs/decisions.md). Undefined when `text` is not a version.
 */
export function normalizeVersion(text: string): NormalizedVersion | undefined {
  const m = VERSION_INPUT.exec(text);
  if (!m) return undefined;
  const [, major, minor = '0', patch = '0', pre, build] = m;
  return {
    version: `${major}.${minor}.${patch}${pre === undefined ? '' : `-${pre}`}`,
    ...(build === undefined ? {} : { build }),
  };
}
