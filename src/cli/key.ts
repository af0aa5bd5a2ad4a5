// key:generate: a new APP_KEY, printed or written into ./.env.
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { generateAppKey } from '../config.js';
import type { Command } from './command.js';

/** Returns the .env text with APP_KEY set to `key`, replacing an existing line or appending one. */
export function withAppKey(envText: string, key: string): { text: string; replaced: boolean } {
  const line = /^[ \t]*(export[ \t]+)?APP_KEY[ \t]*=.*$/m;
  if (line.test(envText)) return { text: envText.replace(line, `APP_KEY=${key}`), replaced: true };
  const separator = envText === '' || envText.endsWith('\n') ? '' : '\n';
  return { text: `${envText}${separator}APP_KEY=${key}\n`, replaced: false };
}

export const keyGenerate: Command = {
  summary: 'Generate a new APP_KEY',
  usage: '[--write]',
  description: [
    'Prints a new key in Laravel\'s form "base64:<32 random bytes>". With --write it is stored in',
    './.env instead, replacing the APP_KEY line there: sessions, remember-me cookies and signed',
    'links made with the old key stop working.',
  ],
  options: [{ name: 'write', type: 'boolean', description: 'Write the key into ./.env instead of printing it' }],
  positionals: [],
  async run(args, rt) {
    const key = generateAppKey();
    if (args.values.write !== true) {
      rt.out(key);
      return;
    }
    const file = resolve(rt.ctx.cwd ?? process.cwd(), '.env');
    const before = existsSync(file) ? readFileSync(file, 'utf8') : '';
    const updated = withAppKey(before, key);
    writeFileSync(file, updated.text, { mode: 0o600 });
    rt.out(updated.replaced ? `APP_KEY replaced in ${file}.` : `APP_KEY written to ${file}.`);
  },
};
