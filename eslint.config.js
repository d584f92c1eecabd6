// ESLint (flat config): typescript-eslint's recommended rules on weir's TypeScript, with the
// rules that need types for the async code a stream processor is made of; formatting is
// Prettier's (eslint-config-prettier turns off the rules it owns). `npm run lint` runs it.
import js from '@eslint/js';
import prettier from 'eslint-config-prettier';
import tseslint from 'typescript-eslint';

export default tseslint.config(
  { ignores: ['dist/', 'node_modules/', 'kafka/', '.kafka/', 'bench/kafka-streams/', 'test/integration/.tmp/', 'coverage/'] },
  // bench/run.ts's BENCH_BASELINE checkouts: an earlier commit's tree (git-ignored)
  { ignores: ['.bench-baseline/'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    files: ['**/*.ts'],
    languageOptions: { parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname } },
    rules: {
      // Promises that nobody awaits lose their errors; weir marks deliberate ones with `void`.
      '@typescript-eslint/no-floating-promises': 'error',
      '@typescript-eslint/no-misused-promises': ['error', { checksVoidReturn: false }],
      // Serdes and user processors take and return values of any shape.
      '@typescript-eslint/no-explicit-any': 'off',
      '@typescript-eslint/no-unused-vars': [
        'error',
        { argsIgnorePattern: '^_', varsIgnorePattern: '^_', destructuredArrayIgnorePattern: '^_' },
      ],
      // kafkajs' values come through src/kafkajs/kafkajs-library.ts, which loads kafkajs with
      // weir's read_committed fix (its aborted-transaction filter); types may come from kafkajs.
      '@typescript-eslint/no-restricted-imports': [
        'error',
        {
          paths: [
            {
              name: 'kafkajs',
              allowTypeImports: true,
              message: "Import kafkajs' values from src/kafkajs/kafkajs-library.ts (kafkajs with weir's read_committed fix).",
            },
          ],
        },
      ],
    },
  },
  { files: ['**/*.js', '**/*.mjs'], languageOptions: { globals: { process: 'readonly', console: 'readonly' } } },
  prettier,
);
