// The log destination (src/perf/log-destination.ts) on real file descriptors: a file, and a FIFO whose
// reader stops, as a full pipe to a stalled log collector does.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { closeSync, constants, mkdtempSync, openSync, readFileSync, readSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { after, describe, it } from 'node:test';
import { LogDestination } from '../../src/perf/log-destination.js';

const dir = mkdtempSync(join(tmpdir(), 'tessera-log-'));
after(() => rmSync(dir, { recursive: true, force: true }));

const line = (n: number) => `${JSON.stringify({ level: 30, n, msg: 'request' })}\n`;

function fileDestination(name: string, options: { blockBytes?: number; flushEveryMs?: number } = {}) {
  const path = join(dir, name);
  const fd = openSync(path, 'w');
  const destination = new LogDestination({ fd, flushEveryMs: 60_000, ...options });
  return { destination, read: () => readFileSync(path, 'utf8'), close: () => closeSync(fd) };
}

describe('log destination', () => {
  it('holds lines until a block is full, then writes them in one go, in order', async () => {
    const { destination, read, close } = fileDestination('block.log', { blockBytes: 1000 });
    const first = Array.from({ length: 10 }, (_, i) => line(i));
    for (const each of first) destination.write(each);
    await sleep(50);
    assert.equal(read(), '', 'nothing written below the block size');
    const rest = Array.from({ length: 40 }, (_, i) => line(10 + i));
    for (const each of rest) destination.write(each);
    await destination.close();
    assert.equal(read(), [...first, ...rest].join(''));
    close();
  });

  it('writes what is pending when the timer fires, though no block is full', async () => {
    const { destination, read, close } = fileDestination('timer.log', { flushEveryMs: 30 });
    destination.write(line(1));
    destination.write(line(2));
    // Each sleep lasts a whole period, so the destination's timer falls due before it ends: a
    // hundred periods with nothing written means the timer never writes, however busy the machine.
    for (let periods = 0; periods < 100 && read() === ''; periods += 1) await sleep(30);
    assert.equal(read(), line(1) + line(2));
    await destination.close();
    close();
  });

  it('keeps the order when lines arrive while a block is being written, and close() writes everything', async () => {
    const { destination, read, close } = fileDestination('order.log', { blockBytes: 200 });
    const all = Array.from({ length: 2000 }, (_, i) => line(i));
    for (const each of all) destination.write(each);
    await destination.close();
    assert.equal(read(), all.join(''));
    destination.write(line(-1));
    assert.equal(read(), all.join('') + line(-1), 'a line after close() is written at once');
    close();
  });

  it('keeps every byte of lines that are not ASCII, and of a line longer than a block, across reused blocks', async () => {
    const { destination, read, close } = fileDestination('utf8.log', { blockBytes: 256 });
    const all = Array.from({ length: 3000 }, (_, i) =>
      i % 500 === 7 ? `${JSON.stringify({ n: i, msg: 'é€😀'.repeat(200) })}\n` : `${JSON.stringify({ n: i, msg: i % 3 === 0 ? 'Zoë — café 😀' : 'request' })}\n`,
    );
    for (const each of all) destination.write(each);
    await destination.close();
    assert.equal(read(), all.join(''));
    close();
  });

  it('writes the rest at process exit when no write is in progress', () => {
    const { destination, read, close } = fileDestination('exit.log');
    destination.write(line(7));
    destination.flushAtExit();
    assert.equal(read(), line(7));
    close();
  });

  it('never blocks on a stalled reader: drops what is over its limit, says how many once the output moves', async () => {
    const fifo = join(dir, 'stalled.fifo');
    execFileSync('mkfifo', [fifo]);
    // Opened read-write so it needs no reader; non-blocking, as a pipe the event loop must not wait on.
    const writeFd = openSync(fifo, constants.O_RDWR | constants.O_NONBLOCK);
    const readFd = openSync(fifo, constants.O_RDONLY | constants.O_NONBLOCK);
    const destination = new LogDestination({ fd: writeFd, blockBytes: 16 * 1024, maxPendingBytes: 256 * 1024, flushEveryMs: 60_000 });
    // Nobody reads the FIFO until every write() has returned: a destination that waited for the
    // reader would never return (the reader is this thread), and the test would time out.
    const total = 20_000;
    for (let i = 0; i < total; i += 1) destination.write(line(i));
    await sleep(200);
    // The reader comes back: everything the destination kept arrives, then the notice.
    let output = '';
    const chunk = Buffer.alloc(1 << 16);
    // Read until the notice comes, giving up after 250 reads that found the FIFO empty.
    for (let empty = 0; !output.includes('log lines dropped') && empty < 250; ) {
      try {
        const n = readSync(readFd, chunk, 0, chunk.length, null);
        output += chunk.subarray(0, n).toString('utf8');
      } catch {
        empty += 1;
        await sleep(20);
        destination.flush();
      }
    }
    await destination.close();
    closeSync(readFd);
    closeSync(writeFd);
    const lines = output.trim().split('\n').map((text) => JSON.parse(text) as { n?: number; dropped?: number; msg: string });
    const kept = lines.filter((entry) => entry.n !== undefined).map((entry) => entry.n!);
    const notice = lines.find((entry) => entry.msg === 'log lines dropped: the output did not keep up');
    assert.ok(notice !== undefined, 'a warning line counts the dropped lines');
    assert.ok(kept.length < total, 'some lines were dropped');
    assert.equal(notice.dropped, total - kept.length, 'the count is exact');
    assert.deepEqual(kept, Array.from({ length: kept.length }, (_, i) => i), 'the kept lines are the first ones, in order');
  });
});

// WEB_CONCURRENCY workers share one stdout: with `shared`, each write is one block of whole
// lines that a pipe takes in one piece, so no line is torn by another process's bytes. Three
// real processes write into one pipe; every line read must be one whole line of one of them.
describe('log destination shared by several processes', () => {
  const writer = new URL('../support/log-writer.ts', import.meta.url).pathname;
  const torn = (shared: boolean): { torn: number; lines: number } => {
    const one = `"${process.execPath}" --import tsx "${writer}"`;
    const output = execFileSync('sh', ['-c', `(WRITER=a ${one} & WRITER=b ${one} & WRITER=c ${one} & wait) | cat`], {
      env: { ...process.env, SHARED: shared ? '1' : '0', LINES: '20000' },
      maxBuffer: 64 * 1024 * 1024,
      encoding: 'utf8',
      timeout: 60_000,
    });
    let broken = 0;
    const seen = output.split('\n').filter((line) => line !== '');
    for (const line of seen) {
      try {
        const parsed = JSON.parse(line) as { writer?: string };
        if (!['a', 'b', 'c'].includes(parsed.writer ?? '')) broken += 1;
      } catch {
        broken += 1;
      }
    }
    return { torn: broken, lines: seen.length };
  };

  it('keeps every line whole when three processes write into one pipe', () => {
    const result = torn(true);
    assert.equal(result.torn, 0);
    assert.equal(result.lines, 60_000);
  });
});
