// The requirements.txt inside an upstream archive, read when the mirror first fetches it, so the
// policy's advisory list also catches a pack that pins a bad package there rather than in its
// declared dependencies. Only the archive's top level (or its one top folder, as a repository's zip
// has) is looked at, and at most REQUIREMENTS_MAX bytes are read.
import yauzl from 'yauzl';

const REQUIREMENTS_MAX = 256 * 1024;
const REQUIREMENTS_PATH = /^(?:[^/]+\/)?requirements\.txt$/i;

/** The requirement lines: comments, blank lines and pip options (`-r`, `--index-url`) left out. */
export function requirementLines(text: string): string[] {
  return text
    .split(/\r?\n/)
    .map((line) => line.replace(/(^|\s)#.*$/, '').trim())
    .filter((line) => line !== '' && !line.startsWith('-'));
}

function readEntry(zip: yauzl.ZipFile, entry: yauzl.Entry): Promise<string> {
  return new Promise((resolve, reject) => {
    zip.openReadStream(entry, (error, stream) => {
      if (error || !stream) return reject(error ?? new Error('no stream'));
      const chunks: Buffer[] = [];
      let size = 0;
      stream.on('data', (chunk: Buffer) => {
        size += chunk.length;
        if (size > REQUIREMENTS_MAX)
          return stream.destroy(new Error(`requirements.txt is over ${REQUIREMENTS_MAX} bytes`));
        chunks.push(chunk);
      });
      stream.on('error', reject);
      stream.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    });
  });
}

/** The requirement lines of every top-level requirements.txt in the zip at `path` (none when it has none). */
export function archiveRequirements(path: string): Promise<string[]> {
  return new Promise((resolve, reject) => {
    yauzl.open(path, { lazyEntries: true, autoClose: true }, (error, zip) => {
      if (error || !zip) return reject(error ?? new Error('not a zip'));
      const lines: string[] = [];
      const fail = (why: Error) => {
        zip.close();
        reject(why);
      };
      zip.on('error', fail);
      zip.on('end', () => resolve(lines));
      zip.on('entry', (entry: yauzl.Entry) => {
        if (!REQUIREMENTS_PATH.test(entry.fileName)) return zip.readEntry();
        readEntry(zip, entry).then((text) => {
          lines.push(...requirementLines(text));
          zip.readEntry();
        }, fail);
      });
      zip.readEntry();
    });
  });
}
