// ESLint 9 flat config (docs/architecture.md, "House style"): typescript-eslint type-checked rules for TS,
// untyped linting for plain JS, plus the project's architectural bans.
import js from '@eslint/js';
import { defineConfig, globalIgnores } from 'eslint/config';
import { createNodeResolver, importX } from 'eslint-plugin-import-x';
import globals from 'globals';
import tseslint from 'typescript-eslint';

const TS = ['**/*.ts', '**/*.tsx', '**/*.mts', '**/*.cts'];
const JS = ['**/*.js', '**/*.mjs', '**/*.cjs'];
const TESTS = [
  '**/*.test.ts',
  '**/*.spec.ts',
  '**/__tests__/**',
  'packages/*/test/**',
  'tests/**',
  'test/**',
];
/** Packages that receive a Clock instead of reading the wall clock (docs/architecture.md, "House style"). */
const CLOCK_INJECTED = ['engine', 'scheduler', 'coordinator', 'dispatch', 'services'].map(
  (p) => `packages/${p}/src/**`,
);

const PROCESS_ENV_MESSAGE =
  'Read configuration through loadConfig() from @trellis/core; the only reader of process.env is ' +
  'packages/core/src/config/process-env.ts (docs/architecture.md, "House style").';

/** Options of no-restricted-imports. Later blocks that set the rule again must repeat these. */
const restrictedImports = {
  paths: [
    { name: 'process', importNames: ['env'], message: PROCESS_ENV_MESSAGE },
    { name: 'node:process', importNames: ['env'], message: PROCESS_ENV_MESSAGE },
  ],
  patterns: [
    {
      regex: '^@trellis/[^/]+/(src|dist)(/|$)',
      message: 'Import the package entry (@trellis/<pkg>), not its src/ or dist/ files.',
    },
    {
      // `../../core/src/x.js` or `../../packages/core/src/x.js`: a relative path into another package.
      regex: '^(\\.\\./){2,}(packages/)?[^./][^/]*/(src|dist)(/|$)',
      message: 'Import another package through its entry (@trellis/<pkg>), not by relative path.',
    },
  ],
};

/**
 * Each third-party I/O library is imported by its owner package only (docs/architecture.md, "Packages",
 * docs/architecture.md, "House style"). Library -> the packages that may import it.
 */
const OWNERS = {
  'js-yaml': ['core', 'spec'],
  croner: ['spec', 'scheduler'],
  zod: ['core', 'contract', 'api'],
  dockerode: ['executors'],
  ssh2: ['executors'],
  nodemailer: ['executors'],
  'jq-wasm': ['executors'],
  bullmq: ['dispatch'],
  ioredis: ['dispatch'],
  '@grpc/grpc-js': ['coordinator'],
  '@grpc/proto-loader': ['coordinator'],
  express: ['api'],
  'prom-client': ['api'],
  '@opentelemetry/api': ['telemetry'],
  '@opentelemetry/core': ['telemetry'],
  '@opentelemetry/resources': ['telemetry'],
  '@opentelemetry/sdk-trace-base': ['telemetry'],
  '@opentelemetry/exporter-trace-otlp-proto': ['telemetry'],
  pg: ['store-pg'],
};
const PACKAGES = [
  'core',
  'spec',
  'contract',
  'engine',
  'executors',
  'store',
  'store-pg',
  'scheduler',
  'dispatch',
  'coordinator',
  'services',
  'telemetry',
  'api',
  'cli',
  'web',
  'testkit',
];
const TIMER_MODULES = ['timers', 'node:timers', 'timers/promises', 'node:timers/promises'];

/** no-restricted-imports options for the sources of package `pkg`. */
const importRulesFor = (pkg) => ({
  ...restrictedImports,
  paths: [
    ...restrictedImports.paths,
    ...Object.entries(OWNERS)
      .filter(([, owners]) => !owners.includes(pkg))
      .map(([name, owners]) => ({
        name,
        message: `${name} belongs to @trellis/${owners.join(' and @trellis/')}: use that package's port instead.`,
      })),
    ...(CLOCK_INJECTED.includes(`packages/${pkg}/src/**`)
      ? TIMER_MODULES.map((name) => ({
          name,
          message: 'Use the injected Clock (deps.clock.sleep(ms, signal)) instead of timers.',
        }))
      : []),
  ],
});

const wallClockSyntax = [
  {
    selector: "CallExpression[callee.object.name='Date'][callee.property.name='now']",
    message: 'Use the injected Clock (deps.clock.now()) instead of Date.now().',
  },
  {
    selector: "NewExpression[callee.name='Date'][arguments.length=0]",
    message: 'Use the injected Clock (deps.clock.now()) instead of new Date().',
  },
  {
    selector: "CallExpression[callee.name='Date']",
    message: 'Use the injected Clock (deps.clock.now()) instead of Date().',
  },
  {
    selector: 'CallExpression[callee.name=/^(setTimeout|setInterval)$/]',
    message: 'Use the injected Clock (deps.clock.sleep(ms, signal)) instead of a bare timer.',
  },
  {
    selector:
      'CallExpression[callee.object.name=/^(globalThis|global|timers)$/][callee.property.name=/^(setTimeout|setInterval)$/]',
    message: 'Use the injected Clock (deps.clock.sleep(ms, signal)) instead of a bare timer.',
  },
];

export default defineConfig(
  globalIgnores([
    '**/dist/**',
    '**/node_modules/**',
    '**/coverage/**',
    'packages/*/test/fixtures/**',
    'packages/coordinator/src/gen/**', // generated gRPC stubs (`pnpm gen:proto`)
    '.trellis-test-*/**',
    '**/*.tsbuildinfo',
  ]),

  {
    linterOptions: { reportUnusedDisableDirectives: 'error' },
  },

  // Every file: JS recommended, Node globals, the architectural bans and import cycles.
  {
    name: 'trellis/all',
    files: [...TS, ...JS],
    extends: [js.configs.recommended],
    plugins: { 'import-x': importX },
    languageOptions: {
      ecmaVersion: 2023,
      sourceType: 'module',
      globals: { ...globals.node },
    },
    settings: {
      'import-x/extensions': ['.ts', '.mts', '.cts', '.js', '.mjs', '.cjs'],
      'import-x/external-module-folders': ['node_modules', 'node_modules/@types'],
      'import-x/parsers': { '@typescript-eslint/parser': ['.ts', '.mts', '.cts'] },
      'import-x/resolver-next': [
        createNodeResolver({
          // NodeNext sources import `./x.js`, which is `./x.ts` on disk; workspace packages resolve
          // to src/ through the custom export condition, so cycles across packages are seen too.
          extensions: ['.ts', '.mts', '.cts', '.js', '.mjs', '.cjs', '.json', '.node'],
          extensionAlias: {
            '.js': ['.ts', '.js'],
            '.mjs': ['.mts', '.mjs'],
            '.cjs': ['.cts', '.cjs'],
          },
          conditionNames: ['@trellis/source', 'types', 'import', 'node', 'default'],
        }),
      ],
    },
    rules: {
      'import-x/no-cycle': ['error', { ignoreExternal: true }],
      'no-restricted-properties': [
        'error',
        { object: 'process', property: 'env', message: PROCESS_ENV_MESSAGE },
      ],
      'no-restricted-imports': ['error', restrictedImports],
    },
  },

  // TypeScript: type-checked rules through the project service (each package's tsconfig.json).
  {
    name: 'trellis/typescript',
    files: TS,
    extends: [tseslint.configs.recommendedTypeChecked],
    languageOptions: {
      parserOptions: {
        projectService: {
          // Root-level config files (vitest.config.ts) belong to no package tsconfig.
          allowDefaultProject: ['*.ts', '*.mts'],
          defaultProject: 'tsconfig.base.json',
        },
        tsconfigRootDir: import.meta.dirname,
      },
    },
    rules: {
      '@typescript-eslint/no-floating-promises': 'error',
      '@typescript-eslint/no-misused-promises': 'error',
      '@typescript-eslint/switch-exhaustiveness-check': [
        'error',
        { considerDefaultExhaustiveForUnions: true, requireDefaultForNonUnion: false },
      ],
      '@typescript-eslint/consistent-type-imports': [
        'error',
        { prefer: 'type-imports', fixStyle: 'separate-type-imports' },
      ],
      '@typescript-eslint/only-throw-error': 'error',
      // Escape hatch: `// eslint-disable-next-line @typescript-eslint/no-explicit-any -- <reason>`.
      '@typescript-eslint/no-explicit-any': 'error',
      // `_`-prefixed names mark parameters a port implementation or fake must accept but not use.
      '@typescript-eslint/no-unused-vars': [
        'error',
        { argsIgnorePattern: '^_', varsIgnorePattern: '^_', caughtErrorsIgnorePattern: '^_' },
      ],
    },
  },

  // The web UI runs in the browser (packages/web: React, built by Vite).
  {
    name: 'trellis/web-browser',
    files: ['packages/web/src/**'],
    languageOptions: { globals: { ...globals.browser } },
  },

  // Plain JS (bin/, bench/, this file): no type information.
  {
    name: 'trellis/javascript',
    files: JS,
    extends: [tseslint.configs.recommended, tseslint.configs.disableTypeChecked],
  },

  // Wall-clock bans in clock-injected packages (not in their tests).
  {
    name: 'trellis/clock-injected',
    files: CLOCK_INJECTED,
    ignores: TESTS,
    rules: {
      'no-restricted-syntax': ['error', ...wallClockSyntax],
    },
  },

  // Library ownership (and timer bans in clock-injected packages), per package source tree.
  ...PACKAGES.map((pkg) => ({
    name: `trellis/imports-${pkg}`,
    files: [`packages/${pkg}/src/**`],
    ignores: TESTS,
    rules: { 'no-restricted-imports': ['error', importRulesFor(pkg)] },
  })),

  // Small rooms (docs/architecture.md, "House style"): no file over 400 lines, tests included; no
  // function over 80 lines in production sources. A declarative table (a route table) may say so
  // with `// eslint-disable-next-line max-lines-per-function -- a declarative route table`.
  {
    name: 'trellis/small-rooms',
    files: [...TS, ...JS],
    rules: { 'max-lines': ['error', { max: 400 }] },
  },
  {
    name: 'trellis/small-functions',
    files: ['packages/*/src/**'],
    ignores: TESTS,
    rules: {
      'max-lines-per-function': ['error', { max: 80, skipBlankLines: true, skipComments: true }],
    },
  },

  // Tests: vitest matchers take method references; non-null assertions are fine on fixtures.
  {
    name: 'trellis/tests',
    files: TESTS,
    rules: {
      '@typescript-eslint/unbound-method': 'off',
      '@typescript-eslint/no-non-null-assertion': 'off',
      // HTTP response bodies are untyped JSON in tests; assertions check their shape.
      '@typescript-eslint/no-unsafe-member-access': 'off',
      '@typescript-eslint/no-unsafe-call': 'off',
      '@typescript-eslint/no-unsafe-assignment': 'off',
      '@typescript-eslint/no-unsafe-argument': 'off',
    },
  },
);
