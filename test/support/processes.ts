// The processes a test started, found through /proc (Linux).
import { readFileSync, readdirSync } from 'node:fs';

/** Every process descending from `pid`, with its command line as one string and as its arguments ([] once it is gone). */
export function descendants(pid: number): { pid: number; cmd: string; args: string[] }[] {
  const children = new Map<number, number[]>();
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    try {
      const stat = readFileSync(`/proc/${name}/stat`, 'utf8');
      // The parent is the second field after the command name, which is in parentheses.
      const parent = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
      children.set(parent, [...(children.get(parent) ?? []), Number(name)]);
    } catch {
      // gone meanwhile
    }
  }
  const found: { pid: number; cmd: string; args: string[] }[] = [];
  const visit = (parent: number) => {
    for (const child of children.get(parent) ?? []) {
      let args: string[] = [];
      try {
        args = readFileSync(`/proc/${child}/cmdline`, 'utf8').split('\0').filter((arg) => arg !== '');
      } catch {
        // gone meanwhile
      }
      found.push({ pid: child, cmd: args.join(' '), args });
      visit(child);
    }
  };
  visit(pid);
  return found;
}
