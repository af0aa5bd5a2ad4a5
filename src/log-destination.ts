// Where the log lines go: stdout, written in blocks rather than one write(2) per line.
//
// Hand-written rather than pino.destination (sonic-boom): buffering there measures the UTF-8
// length of the whole pending block again for every line added (so a 4 KiB block cost 3 % of an
// authenticated API read, and a larger block costs more), and its asynchronous mode hands every
// block to the thread pool. Here a line costs an array push; a block of 64 KiB (or whatever is
// pending once a second) is written by one fs.write, so a thread-pool round trip is shared by
// some hundreds of requests.
//
// The event loop never waits for the reader: while a block is being written, lines gather; a
// reader that stops (a full pipe: EAGAIN) is retried every 50 ms; past `maxPendingBytes` lines
// are counted and dropped, and a warning line says how many once the output moves again. A
// process killed with SIGKILL loses at most its last second of lines; close() writes the rest.
import { write, writeSync } from 'node:fs';

export type LogDestinationOptions = {
  /** The file descriptor written to (1: stdout). */
  fd: number;
  /** A block is written once this much is pending (characters; lines are mostly ASCII). */
  blockBytes?: number;
  /** Whatever is pending is written at least this often. */
  flushEveryMs?: number;
  /** Lines beyond this much pending are dropped (and counted) rather than kept. */
  maxPendingBytes?: number;
};

const RETRY_MS = 50;

export class LogDestination {
  private readonly fd: number;
  private readonly blockBytes: number;
  private readonly maxPendingBytes: number;
  private parts: string[] = [];
  private pending = 0;
  private dropped = 0;
  /** The write in progress, if any: lines go on gathering meanwhile. */
  private writing: Promise<void> | null = null;
  private closed = false;
  private readonly timer: NodeJS.Timeout;

  constructor(options: LogDestinationOptions) {
    this.fd = options.fd;
    this.blockBytes = options.blockBytes ?? 64 * 1024;
    this.maxPendingBytes = options.maxPendingBytes ?? 16 * 1024 * 1024;
    this.timer = setInterval(() => this.flush(), options.flushEveryMs ?? 1000).unref();
  }

  /** pino's stream interface: one serialized line, newline included. */
  write(line: string): void {
    // After close() (other onClose hooks may still log), each line is written at once, unless
    // close() is still waiting for a block in progress: it writes the line after that block.
    if (this.closed) {
      this.parts.push(line);
      if (this.writing === null) this.writeRestSync();
      return;
    }
    if (this.pending >= this.maxPendingBytes) {
      this.dropped += 1;
      return;
    }
    this.parts.push(line);
    this.pending += line.length;
    if (this.pending >= this.blockBytes) this.flush();
  }

  /** Starts writing what is pending, unless a write is already in progress (it continues with it). */
  flush(): void {
    if (this.writing !== null || (this.parts.length === 0 && this.dropped === 0)) return;
    const block = this.takeBlock();
    this.writing = new Promise<void>((resolve) => this.writeFrom(block, 0, resolve));
  }

  /**
   * Stops the timer and writes everything still pending; later lines are written one by one, at
   * once. A reader that takes no more within `waitMs` does not hold the shutdown: the rest is
   * given up.
   */
  async close(waitMs = 2000): Promise<void> {
    clearInterval(this.timer);
    this.closed = true;
    const deadline = Date.now() + waitMs;
    // The block in progress goes first, so lines keep their order.
    while (this.writing !== null) {
      const left = deadline - Date.now();
      if (left <= 0) return;
      let timer: NodeJS.Timeout | undefined;
      await Promise.race([this.writing, new Promise((resolve) => (timer = setTimeout(resolve, left)))]);
      clearTimeout(timer);
    }
    this.writeRestSync();
  }

  /**
   * At process exit, where nothing asynchronous can run: writes what is pending, unless a write
   * is still in progress (writing beside it could interleave two blocks).
   */
  flushAtExit(): void {
    if (this.writing === null) this.writeRestSync();
  }

  private takeBlock(): Buffer {
    if (this.dropped > 0) {
      const notice = { level: 40, time: Date.now(), dropped: this.dropped, msg: 'log lines dropped: the output did not keep up' };
      this.parts.push(`${JSON.stringify(notice)}\n`);
      this.dropped = 0;
    }
    const block = Buffer.from(this.parts.join(''), 'utf8');
    this.parts = [];
    this.pending = 0;
    return block;
  }

  private writeFrom(block: Buffer, offset: number, done: () => void): void {
    write(this.fd, block, offset, block.length - offset, null, (error, written) => {
      if (error !== null) {
        // A full pipe: try again shortly. Anything else (the reader went away): the block is lost,
        // and nothing is thrown; the service goes on.
        if (error.code === 'EAGAIN') {
          setTimeout(() => this.writeFrom(block, offset, done), RETRY_MS).unref();
          return;
        }
      } else if (offset + written < block.length) {
        this.writeFrom(block, offset + written, done);
        return;
      }
      this.writing = null;
      done();
      if (this.pending >= this.blockBytes || (this.closed && this.parts.length > 0)) this.flush();
    });
  }

  private writeRestSync(): void {
    if (this.parts.length === 0 && this.dropped === 0) return;
    const block = this.takeBlock();
    let offset = 0;
    let attempts = 0;
    while (offset < block.length && attempts < 100) {
      try {
        offset += writeSync(this.fd, block, offset, block.length - offset);
      } catch {
        // A full pipe at exit: a few more tries, then the rest is given up.
        attempts += 1;
      }
    }
  }
}
