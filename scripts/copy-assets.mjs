// Copies the non-TypeScript parts of src/ (templates, locale files) next to the compiled code,
// so dist/ runs on its own with the same relative paths as src/.
import { cpSync, existsSync } from 'node:fs';

for (const dir of ['views', 'locales']) {
  if (existsSync(`src/${dir}`)) cpSync(`src/${dir}`, `dist/${dir}`, { recursive: true });
}
// The common-password list is read next to its loader.
cpSync('src/modules/passwords/common-passwords.txt', 'dist/modules/passwords/common-passwords.txt');
