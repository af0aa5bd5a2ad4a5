// One linter for the whole repository (STYLE.md 13), run by `npm run lint` and in CI before the
// tests. Type-aware where it matters: a promise nobody awaits or handles, a promise passed where
// a callback's result is ignored. `import type` is enforced by the compiler (verbatimModuleSyntax).
import { builtinModules } from 'node:module';
import js from '@eslint/js';
import globals from 'globals';
import tseslint from 'typescript-eslint';

export default tseslint.config(
  { ignores: ['dist/', 'node_modules/', 'data/', '.scratch/'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  { files: ['**/*.{js,mjs}'], languageOptions: { globals: globals.node } },
  { files: ['public/**/*.js'], languageOptions: { globals: globals.browser, sourceType: 'script' } },
  {
    files: ['**/*.ts'],
    languageOptions: {
      parserOptions: { project: './tsconfig.test.json', tsconfigRootDir: import.meta.dirname },
    },
    rules: {
      // node:test's describe/it return promises the runner itself awaits.
      '@typescript-eslint/no-floating-promises': [
        'error',
        { allowForKnownSafeCalls: [{ from: 'package', package: 'node:test', name: ['describe', 'it', 'test', 'suite', 'before', 'after', 'beforeEach', 'afterEach'] }] },
      ],
      '@typescript-eslint/no-misused-promises': 'error',
      '@typescript-eslint/await-thenable': 'error',
      '@typescript-eslint/no-explicit-any': 'error',
      // A leading underscore marks a name left unused on purpose (a skipped argument, a field
      // taken out of an object by destructuring).
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_', caughtErrorsIgnorePattern: '^_' }],
      // Built-in modules by their node: name, so they can never be shadowed by a package (the
      // list also holds the prefix-only ones, such as node:test, under their full name).
      'no-restricted-imports': ['error', { paths: builtinModules.filter((name) => !name.startsWith('_') && !name.startsWith('node:')).map((name) => ({ name, message: `import 'node:${name}'` })) }],
    },
  },
);
