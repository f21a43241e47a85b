// Git LFS pointer files (the LFS spec: under 1024 bytes, first line the spec URL). A checkout without
// LFS content (actions/checkout's default) has them in place of the models and images. The packer tells
// them from the bytes it reads anyway (deflate.ts); a check that packs nothing reads their first line.
import { closeSync, openSync, readSync } from 'node:fs';

const LFS_POINTER = Buffer.from('version https://git-lfs.github.com/spec/v1\n');
/** The shortest pointer: the version line, `oid sha256:` and 64 hex digits, `size 0`, each with its newline. */
const LFS_POINTER_MIN = LFS_POINTER.length + 76 + 7;
const LFS_POINTER_MAX = 1024;

/** Whether a file of `size` bytes may be a pointer: the only ones whose first bytes are looked at. */
export const mayBeLfsPointer = (size: number) => size >= LFS_POINTER_MIN && size < LFS_POINTER_MAX;

/** Whether a file of `size` bytes starting with `head` is a pointer. */
export const isLfsPointer = (size: number, head: Uint8Array) =>
  mayBeLfsPointer(size) &&
  head.length >= LFS_POINTER.length &&
  LFS_POINTER.equals(head.subarray(0, LFS_POINTER.length));

/** The warning for a pointer that would ship: the node would hold the pointer, not the file. */
export const lfsPointerWarning = (path: string) =>
  `${path} is a Git LFS pointer, not the file itself: fetch the content with \`git lfs pull\` before packing (in GitHub Actions: actions/checkout with \`lfs: true\`)`;

/** The paths of the pointers among `files`, each read for its first line only: for a check that packs nothing. */
export function findLfsPointers(files: readonly { path: string; abs: string; size: number }[]): string[] {
  const head = Buffer.alloc(LFS_POINTER.length);
  const found: string[] = [];
  for (const file of files) {
    if (!mayBeLfsPointer(file.size)) continue;
    let fd: number;
    try {
      fd = openSync(file.abs, 'r');
    } catch {
      continue; // unreadable: packing reports it
    }
    try {
      if (isLfsPointer(file.size, head.subarray(0, readSync(fd, head, 0, head.length, 0)))) found.push(file.path);
    } finally {
      closeSync(fd);
    }
  }
  return found;
}
