// Where the log lines go: stdout, written in blocks rather than one write(2) per line.
//
// Hand-written rather than pino.destination (sonic-boom): buffering there measures the UTF-8
// length of the whole pending block again for every line added, and its asynchronous mode hands
// every block to the thread pool. Here a line is encoded at once into a block of bytes (64 KiB,
// allocated once and reused), and the full blocks (or whatever is pending once a second) are
// written by one fs.writev, so a thread-pool round trip is shared by some hundreds of requests.
// Lines are not kept as strings to be joined later: a fresh large buffer per block puts V8 on
// its slow path for the tick objects of Node's own stream code. (What each choice saved:
// docs/performance.md.)
//
// The event loop never waits for the reader: while blocks are being written, lines gather; a
// reader that stops (a full pipe: EAGAIN) is retried every 50 ms; past `maxPendingBytes` lines
// are counted and dropped, and a warning line says how many once the output moves again. A
// process killed with SIGKILL loses at most its last second of lines; close() writes the rest.
import { writeSync, writev } from 'node:fs';

export type LogDestinationOptions = {
  /** The file descriptor written to (1: stdout). */
  fd: number;
  /** A block is written once this many bytes are pending. */
  blockBytes?: number;
  /** Whatever is pending is written at least this often. */
  flushEveryMs?: number;
  /** Lines beyond this many pending bytes are dropped (and counted) rather than kept. */
  maxPendingBytes?: number;
  /**
   * Several processes write to the same output (WEB_CONCURRENCY workers): each write is one
   * block of whole lines of at most PIPE_BUF bytes, which a pipe takes in one piece, so no
   * worker's bytes land in the middle of another's line. (A single line longer than that is
   * still written on its own.)
   */
  shared?: boolean;
};

/** The most a pipe takes in one piece, never interleaved with other writers (POSIX PIPE_BUF on Linux). */
const PIPE_BUF = 4096;

const RETRY_MS = 50;
/** Emptied blocks kept for reuse (at most). */
const SPARE_BLOCKS = 4;

export class LogDestination {
  private readonly fd: number;
  private readonly blockBytes: number;
  private readonly maxPendingBytes: number;
  private readonly shared: boolean;
  /** The block lines are encoded into, and how many of its bytes are used. */
  private block: Buffer;
  private used = 0;
  /** Filled blocks (or parts of blocks) waiting to be written, in order. */
  private filled: Buffer[] = [];
  /** Bytes in `filled`, plus `used`. */
  private pending = 0;
  private readonly spare: Buffer[] = [];
  /** The memory of the blocks allocated here: only these are reused (never a pooled buffer). */
  private readonly owned = new WeakSet<ArrayBufferLike>();
  private dropped = 0;
  /** The write in progress, if any: lines go on gathering meanwhile. */
  private writing: Promise<void> | null = null;
  private closed = false;
  private readonly timer: NodeJS.Timeout;

  constructor(options: LogDestinationOptions) {
    this.fd = options.fd;
    this.shared = options.shared === true;
    this.blockBytes = this.shared ? Math.min(options.blockBytes ?? PIPE_BUF, PIPE_BUF) : (options.blockBytes ?? 64 * 1024);
    this.maxPendingBytes = options.maxPendingBytes ?? 16 * 1024 * 1024;
    this.block = this.newBlock();
    this.timer = setInterval(() => this.flush(), options.flushEveryMs ?? 1000).unref();
  }

  /** pino's stream interface: one serialized line, newline included. */
  write(line: string): void {
    if (!this.closed && this.pending >= this.maxPendingBytes) {
      this.dropped += 1;
      return;
    }
    this.append(line);
    // After close() (other onClose hooks may still log), each line is written at once, unless
    // close() is still waiting for a block in progress: it writes the line after that block.
    if (this.closed) {
      if (this.writing === null) this.writeRestSync();
    } else if (this.pending >= this.blockBytes) {
      this.flush();
    }
  }

  /** Starts writing what is pending, unless a write is already in progress (it continues with it). */
  flush(): void {
    if (this.writing !== null) return;
    const blocks = this.takeBlocks();
    if (blocks.length === 0) return;
    this.writing = new Promise<void>((resolve) => this.writeFrom(blocks, resolve));
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

  /** Encodes the line into the current block; a full block joins the ones waiting. */
  private append(line: string): void {
    // UTF-8 takes at most three bytes for each UTF-16 unit of the string.
    if (this.used + line.length * 3 > this.block.length) {
      this.seal();
      if (line.length * 3 > this.block.length) {
        // A line longer than a block is a block of its own.
        const bytes = Buffer.from(line, 'utf8');
        this.filled.push(bytes);
        this.pending += bytes.length;
        return;
      }
    }
    const written = this.block.write(line, this.used, 'utf8');
    this.used += written;
    this.pending += written;
  }

  /** Moves the used part of the current block to the waiting ones and starts another block. */
  private seal(): void {
    if (this.used === 0) return;
    this.filled.push(this.block.subarray(0, this.used));
    this.block = this.spare.pop() ?? this.newBlock();
    this.used = 0;
  }

  /** Everything pending, in order (with the dropped-lines notice last), and nothing left pending. */
  private takeBlocks(): Buffer[] {
    if (this.dropped > 0) {
      const notice = { level: 40, time: Date.now(), dropped: this.dropped, msg: 'log lines dropped: the output did not keep up' };
      this.dropped = 0;
      this.append(`${JSON.stringify(notice)}\n`);
    }
    this.seal();
    const blocks = this.filled;
    this.filled = [];
    this.pending = this.used;
    return blocks;
  }

  private newBlock(): Buffer {
    const block = Buffer.allocUnsafeSlow(this.blockBytes);
    this.owned.add(block.buffer);
    return block;
  }

  /** Returns written blocks to the spares. */
  private recycle(blocks: Buffer[]): void {
    for (const block of blocks) {
      if (this.spare.length < SPARE_BLOCKS && this.owned.has(block.buffer)) this.spare.push(Buffer.from(block.buffer));
    }
  }

  private writeFrom(blocks: Buffer[], done: () => void, offset = 0): void {
    const rest = offset === 0 ? blocks : skip(blocks, offset);
    // Shared output: one block a write (see `shared`); the next follows once it is written.
    writev(this.fd, this.shared ? rest.slice(0, 1) : rest, (error, written) => {
      if (error !== null) {
        // A full pipe: try again shortly. Anything else (the reader went away): the blocks are
        // lost, and nothing is thrown; the service goes on.
        if (error.code === 'EAGAIN') {
          setTimeout(() => this.writeFrom(blocks, done, offset), RETRY_MS).unref();
          return;
        }
      } else if (offset + written < total(blocks)) {
        this.writeFrom(blocks, done, offset + written);
        return;
      }
      this.recycle(blocks);
      this.writing = null;
      done();
      if (this.pending >= this.blockBytes || (this.closed && this.pending > 0)) this.flush();
    });
  }

  private writeRestSync(): void {
    const blocks = this.takeBlocks();
    for (const block of blocks) {
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
    this.recycle(blocks);
  }
}

const total = (blocks: Buffer[]) => blocks.reduce((sum, block) => sum + block.length, 0);

/** The bytes of `blocks` after the first `offset`. */
function skip(blocks: Buffer[], offset: number): Buffer[] {
  const rest: Buffer[] = [];
  let left = offset;
  for (const block of blocks) {
    if (left >= block.length) {
      left -= block.length;
    } else {
      rest.push(left === 0 ? block : block.subarray(left));
      left = 0;
    }
  }
  return rest;
}
