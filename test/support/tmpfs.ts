// A real full disk for the fault tests: a small tmpfs of the test's own, filled with a file until
// the kernel says "no space left on device", and freed by deleting that file. Mounting needs
// root; elsewhere the tests that need it skip, naming why (with CI=true a missing one fails).
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, statfsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { skipWithout } from './services.js';

export type Tmpfs = {
  dir: string;
  /** Fills the file system to the last byte. */
  fill(): void;
  /** Deletes what fill() wrote. */
  free(): void;
  /** Bytes still free. */
  freeBytes(): number;
  unmount(): void;
};

/** The `skip` option of tests that mount a tmpfs. */
export const skipWithoutTmpfs = (): string | false => skipWithout(process.getuid?.() === 0 ? false : 'mounting a tmpfs (a real full disk) needs root');

/** Mounts a tmpfs of `megabytes` on a new temporary directory. */
export function mountTmpfs(megabytes = 4): Tmpfs {
  const dir = mkdtempSync(join(tmpdir(), 'tessera-full-'));
  const mounted = spawnSync('mount', ['-t', 'tmpfs', '-o', `size=${megabytes}m`, 'tmpfs', dir], { encoding: 'utf8' });
  if (mounted.status !== 0) throw new Error(`mount -t tmpfs failed: ${mounted.stderr}`);
  const fillers = [join(dir, 'filler-large'), join(dir, 'filler-small')];
  const freeBytes = () => {
    const stats = statfsSync(dir);
    return stats.bavail * stats.bsize;
  };
  return {
    dir,
    freeBytes,
    fill: () => {
      // Large blocks first, then single pages for what is left; dd stops at ENOSPC (exit 1).
      spawnSync('dd', ['if=/dev/zero', `of=${fillers[0]}`, 'bs=64k'], { stdio: 'ignore' });
      spawnSync('dd', ['if=/dev/zero', `of=${fillers[1]}`, 'bs=4k'], { stdio: 'ignore' });
      if (freeBytes() !== 0) throw new Error(`the tmpfs at ${dir} still has ${freeBytes()} bytes free`);
    },
    free: () => {
      for (const filler of fillers) rmSync(filler, { force: true });
    },
    unmount: () => {
      spawnSync('umount', ['-l', dir], { stdio: 'ignore' });
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
