// Sizes everywhere accept bytes or units: `500kB`, `200MiB`, `1GiB`, `1048576`.
const UNITS: Record<string, number> = {
  b: 1,
  kb: 1e3,
  mb: 1e6,
  gb: 1e9,
  kib: 1024,
  mib: 1024 ** 2,
  gib: 1024 ** 3,
  k: 1024,
  m: 1024 ** 2,
  g: 1024 ** 3,
};

/** Parses a size; returns undefined when it is not one. */
export function parseSize(text: string): number | undefined {
  const match = /^\s*(\d+(?:\.\d+)?)\s*([a-zA-Z]*)\s*$/.exec(text);
  if (!match) return undefined;
  const unit = match[2].toLowerCase() || 'b';
  const factor = UNITS[unit];
  if (factor === undefined) return undefined;
  return Math.floor(Number(match[1]) * factor);
}
