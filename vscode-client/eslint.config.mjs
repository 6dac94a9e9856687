// Flat config: typescript-eslint's type-checked rules, plus two rules of this project.
import js from '@eslint/js';
import tseslint from 'typescript-eslint';

// Pure modules are unit-tested under plain Node, where `vscode` does not exist.
const PURE_MODULES = [
  'src/common/settings.ts',
  'src/common/python.ts',
  'src/common/report.ts',
  'src/common/reportTree.ts',
  'src/common/affectedTests.ts',
  'src/common/locations.ts',
  'src/test/unit/**/*.ts',
];

export default tseslint.config(
  { ignores: ['dist/**', 'out/**', 'node_modules/**', '.test-artifacts/**', 'src/testFixture/**'] },
  js.configs.recommended,
  ...tseslint.configs.strictTypeChecked,
  {
    languageOptions: {
      parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname },
    },
    rules: {
      // STYLE.md: no `as unknown as` casts.
      'no-restricted-syntax': [
        'error',
        {
          selector: 'TSAsExpression > TSAsExpression.expression > TSUnknownKeyword.typeAnnotation',
          message: 'No `as unknown as` casts: narrow with a type guard instead.',
        },
      ],
      '@typescript-eslint/restrict-template-expressions': ['error', { allowNumber: true }],
      '@typescript-eslint/no-confusing-void-expression': ['error', { ignoreArrowShorthand: true }],
    },
  },
  {
    files: PURE_MODULES,
    rules: {
      'no-restricted-imports': [
        'error',
        { paths: [{ name: 'vscode', message: 'Pure modules must not import vscode.' }] },
      ],
    },
  },
  {
    // node:test's describe/it return promises that the runner itself awaits.
    files: ['src/test/**/*.ts'],
    rules: { '@typescript-eslint/no-floating-promises': 'off' },
  },
  {
    files: ['**/*.mjs'],
    extends: [tseslint.configs.disableTypeChecked],
  },
);
