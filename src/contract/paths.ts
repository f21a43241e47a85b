// Operation paths, free of zod: a CLI read builds its URL without loading the schemas.

/** The names of `{placeholders}` in a path. */
export function pathParams(path: string): string[] {
  return [...path.matchAll(/\{(\w+)\}/g)].map((m) => m[1]);
}

/** Fills `{placeholders}` with encoded values. */
export function buildPath(path: string, params: Record<string, string>): string {
  return path.replace(/\{(\w+)\}/g, (_, name: string) => encodeURIComponent(params[name]));
}
