// Entry names of a node archive: the rule both the packer and the registry apply, so that an archive
// extracts to the same files on Linux, macOS and Windows. A name is a relative path with "/" between
// plain segments; no two names may differ only in letter case or Unicode normalisation (NFC/NFD),
// since case-insensitive or normalising file systems would merge them, losing or overwriting files.

/** Why a single name is refused, or undefined when it is a plain relative path (directories end with "/"). */
export function entryNameProblem(name: string): string | undefined {
  if (name === '') return 'has an empty name';
  if (name.includes('\0')) return 'has a NUL character in its name';
  if (name.includes('\\')) return 'has a backslash in its name (use "/" as the separator)';
  if (name.startsWith('/')) return 'has an absolute name';
  if (/^[a-zA-Z]:/.test(name)) return 'has a name starting with a drive letter';
  const segments = name.replace(/\/$/, '').split('/');
  if (segments.includes('..')) return 'has a ".." segment in its name';
  if (segments.includes('.')) return 'has a "." segment in its name';
  if (segments.includes('')) return 'has an empty segment in its name ("//")';
  return undefined;
}

/** The form two names that extract to the same path share: NFC, lower case. */
const foldSegment = (segment: string) => segment.normalize('NFC').toLowerCase();

interface PathNode {
  /** The segment as first spelled. */
  spelled: string;
  /** Named by an entry of its own (a file, or a directory entry "x/"). */
  named: boolean;
  file: boolean;
  children?: Map<string, PathNode>;
}

/**
 * Checks the names of one archive, one at a time, against each other: exact duplicates, names that
 * collide once case and Unicode normalisation are folded (also as directories: `A/x` beside `a/y`),
 * and a file that is also a directory. Linear in the total length of the names (a tree of segments).
 * Returns the problem, or undefined.
 */
export function createEntryNameChecker(): (name: string) => string | undefined {
  const root: PathNode = { spelled: '', named: false, file: false, children: new Map() };
  return (name) => {
    const directory = name.endsWith('/');
    const segments = name.replace(/\/$/, '').split('/');
    let node = root;
    let path = '';
    for (const [index, segment] of segments.entries()) {
      const last = index === segments.length - 1;
      if (node.file) return `is inside ${JSON.stringify(path)}, which is also a file`;
      node.children ??= new Map();
      const key = foldSegment(segment);
      let child = node.children.get(key);
      if (!child) {
        child = { spelled: segment, named: false, file: false };
        node.children.set(key, child);
      } else if (child.spelled !== segment) {
        const spelled = path + child.spelled + (last && !directory ? '' : '/');
        return `collides with ${JSON.stringify(spelled)} where letter case or Unicode normalisation is ignored (macOS, Windows)`;
      }
      path += `${segment}/`;
      node = child;
      if (last) {
        if (node.named) return 'appears more than once';
        if (!directory && node.children?.size) return 'is a file and also a directory';
        node.named = true;
        node.file = !directory;
      }
    }
    return undefined;
  };
}
