// Sizes as the registry's answers word them: `1.5 KiB`.
/** 1536 → "1.5 KiB". */
export function formatSize(bytes: number): string {
  const units = ['B', 'KiB', 'MiB', 'GiB', 'TiB'];
  let value = bytes;
  let unit = 0;
  while (value >= 1024 && unit < units.length - 1) {
    value /= 1024;
    unit++;
  }
  return unit === 0 ? `${bytes} B` : `${value.toFixed(value < 10 ? 1 : 0)} ${units[unit]}`;
}

/** How a registry refuses an archive over its limit, the same for a declared size (publish) and a sent one (upload). */
export function archiveOverLimit(size: number, limit: number): string {
  return `the archive is ${formatSize(size)} (${size} bytes), over this registry's limit of ${formatSize(limit)} (${limit} bytes)`;
}
