// A yauzl RandomAccessReader that serves its small reads (the central directory, local headers) from
// two cached 64 KiB blocks: yauzl's own file reader asks the thread pool twice per entry, which made
// a zip of 65,535 empty entries take over 30 s to check. Entry data is still streamed from the file.
// Given the whole file (a small archive, read at once), it serves every read from it.
import { close, read } from 'node:fs';
import { Readable } from 'node:stream';
import yauzl from 'yauzl';

const BLOCK = 64 * 1024;

export class CachedZipReader extends yauzl.RandomAccessReader {
  /** The two most recent blocks, newest first: the central directory and the local headers alternate. */
  private blocks: { start: number; data: Buffer }[] = [];

  constructor(
    private readonly fd: number,
    private readonly whole?: Buffer,
  ) {
    super();
    if (whole) this.blocks = [{ start: 0, data: whole }];
  }

  /** Entry data, read in 64 KiB pieces; the stream never owns (or closes) the file. */
  _readStreamForRange(start: number, end: number): Readable {
    const fd = this.fd;
    let position = start;
    return new Readable({
      read() {
        const length = Math.min(BLOCK, end - position);
        if (length <= 0) return void this.push(null);
        const data = Buffer.allocUnsafe(length);
        read(fd, data, 0, length, position, (error, bytesRead) => {
          if (error) return this.destroy(error);
          if (bytesRead === 0) return this.destroy(new Error(`unexpected end of file at byte ${position}`));
          position += bytesRead;
          this.push(data.subarray(0, bytesRead));
        });
      },
    });
  }

  read(buffer: Buffer, offset: number, length: number, position: number, callback: (err: Error | null) => void): void {
    const copy = (block: { start: number; data: Buffer }) => {
      block.data.copy(buffer, offset, position - block.start, position - block.start + length);
      process.nextTick(callback, null);
    };
    const cached = this.blocks.find((b) => position >= b.start && position + length <= b.start + b.data.length);
    if (cached) return copy(cached);
    if (this.whole) return process.nextTick(callback, new Error(`unexpected end of file at byte ${this.whole.length}`));
    const data = Buffer.allocUnsafe(Math.max(BLOCK, length));
    read(this.fd, data, 0, data.length, position, (error, bytesRead) => {
      if (error) return callback(error);
      if (bytesRead < length) return callback(new Error(`unexpected end of file at byte ${position + bytesRead}`));
      const block = { start: position, data: data.subarray(0, bytesRead) };
      this.blocks = [block, ...this.blocks.slice(0, 1)];
      copy(block);
    });
  }

  close(callback: (err: Error | null) => void): void {
    close(this.fd, callback);
  }
}
