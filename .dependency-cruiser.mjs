// dependency-cruiser: the package layering and import hygiene, checked by machine (`pnpm lint:deps`).
// The rules hold for every file cruised (packages, tests, bench, scripts and the root configs; see
// the lint:deps script), tests and test helpers included.
// Paths in rules are repository-relative paths of the files an import resolves to. Workspace
// imports (`@trellis/x`) resolve through the `@trellis/source` export condition to
// packages/x/src/*.ts, so a rule about package x is a rule about `^packages/x/`.
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

const ROOT = import.meta.dirname;

/** Files under packages/<pkg>/src that do not ship: tests and the helpers only tests use. */
const TEST_ONLY = [
  '[.]test[.](?:ts|tsx|mts|cts|js|mjs|cjs)$',
  // testing/ and test-support/ folders and test-harness.ts, at any depth under src/ (two patterns:
  // dependency-cruiser rejects a regular expression with nested quantifiers as unsafe).
  '^packages/[^/]+/src/(?:testing/|test-support/|test-harness[.]ts$)',
  '^packages/[^/]+/src/.*/(?:testing/|test-support/|test-harness[.]ts$)',
];
/** The sources that ship: packages/<pkg>/src, minus TEST_ONLY. */
const PRODUCTION = { path: '^packages/[^/]+/src/', pathNot: TEST_ONLY };

/** package directory name -> its package.json (packages/<dir>/package.json). */
const manifests = new Map(
  readdirSync(join(ROOT, 'packages'))
    .filter((dir) => existsSync(join(ROOT, 'packages', dir, 'package.json')))
    .map((dir) => [
      dir,
      JSON.parse(readFileSync(join(ROOT, 'packages', dir, 'package.json'), 'utf8')),
    ]),
);
/** `@trellis/x` -> `x` (the directory under packages/). */
const dirOfName = new Map([...manifests].map(([dir, manifest]) => [manifest.name, dir]));
/** The directories of the workspace packages a manifest section lists. */
const workspaceDirs = (section) =>
  Object.keys(section ?? {})
    .map((name) => dirOfName.get(name))
    .filter((dir) => dir !== undefined);

/**
 * Per package: a file may import another workspace package only if its package.json lists it
 * (dependencies or devDependencies), and shipped sources only what `dependencies` lists.
 * dependency-cruiser's own no-non-package-json and not-to-dev-dep see npm packages only.
 */
const workspaceManifestRules = [...manifests].flatMap(([dir, manifest]) => {
  const runtime = workspaceDirs(manifest.dependencies);
  const dev = workspaceDirs(manifest.devDependencies).filter((d) => !runtime.includes(d));
  const listed = [dir, ...runtime, ...dev];
  const rules = [
    {
      name: 'workspace-dep-not-in-package-json',
      comment: `packages/${dir} imports a workspace package its package.json does not list.`,
      severity: 'error',
      from: { path: `^packages/${dir}/` },
      to: { path: '^packages/', pathNot: `^packages/(?:${listed.join('|')})/` },
    },
  ];
  if (dev.length > 0) {
    rules.push({
      name: 'not-to-dev-dep-workspace',
      comment: `Shipped sources of packages/${dir} import a workspace package listed in devDependencies only.`,
      severity: 'error',
      from: { ...PRODUCTION, path: `^packages/${dir}/src/` },
      to: { path: `^packages/(?:${dev.join('|')})/` },
    });
  }
  return rules;
});

/** A layering rule: files of package `from` must not import the packages matched by `to`. */
const layer = (name, comment, from, to) => ({
  name,
  comment,
  severity: 'error',
  from: { path: `^packages/${from}/` },
  to: { path: `^packages/${to}/` },
});

/** @type {import('dependency-cruiser').IConfiguration} */
export default {
  forbidden: [
    // The package layering (issue 14). Every file counts, tests included.
    layer('core-imports-nothing-of-ours', 'core is the base layer.', 'core', '(?!core/)[^/]+'),
    layer('spec-imports-only-core', 'spec builds on core only.', 'spec', '(?!spec/|core/)[^/]+'),
    layer(
      'engine-not-to-adapters',
      'The engine knows ports, not store, executors, api or dispatch.',
      'engine',
      '(?:store|executors|api|dispatch)',
    ),
    layer(
      'api-not-to-store-engine-dispatch',
      'The api reaches the rest through services.',
      'api',
      '(?:store|engine|dispatch)',
    ),
    layer(
      'services-not-to-store-api',
      'Services depend on ports; store and api are wired in by cli.',
      'services',
      '(?:store|api)',
    ),
    layer(
      'web-imports-only-contract',
      'The web UI shares nothing with the server but the wire contract (@trellis/contract).',
      'web',
      '(?!web/|contract/)[^/]+',
    ),
    layer('scheduler-not-to-api', 'The scheduler starts runs through ports.', 'scheduler', 'api'),
    {
      name: 'packages-through-their-entry',
      comment:
        'Import another package through its entry (@trellis/<pkg>), not by a relative path into its files.',
      severity: 'error',
      from: { path: '^(packages/[^/]+)/' },
      to: { path: '^packages/', pathNot: '^$1/', dependencyTypes: ['local'] },
    },
    {
      name: 'root-files-through-package-entries',
      comment:
        'tests/, bench/ and scripts/ import a package through its entry (@trellis/<pkg>), not its files.',
      severity: 'error',
      from: { pathNot: '^packages/' },
      to: { path: '^packages/', dependencyTypes: ['local'] },
    },
    {
      name: 'packages-not-to-root-files',
      comment: 'A package does not import from tests/, bench/ or scripts/.',
      severity: 'error',
      from: { path: '^packages/' },
      to: { path: '^(?:tests|bench|scripts)/' },
    },

    // Standard hygiene.
    {
      name: 'no-circular',
      comment: 'A circular dependency between files (type-only imports count too).',
      severity: 'error',
      from: {},
      to: { circular: true },
    },
    {
      name: 'no-package-cycle',
      comment:
        'Two packages import each other (tests and test helpers count): a package-level cycle, ' +
        'even where no file-level one exists.',
      severity: 'error',
      scope: 'folder',
      from: { path: '^(packages/[^/]+)/src$' },
      to: { circular: true, pathNot: '^$1/' },
    },
    {
      name: 'not-to-unresolvable',
      comment: 'An import that does not resolve to a file.',
      severity: 'error',
      from: {},
      to: { couldNotResolve: true },
    },
    {
      name: 'no-non-package-json',
      comment:
        "An npm package the importing package's package.json does not list. vitest is the exception: " +
        'the root package.json provides the test runner to every package (not-to-test-runner keeps it out ' +
        'of shipped sources).',
      severity: 'error',
      from: {},
      to: {
        dependencyTypes: ['npm-no-pkg', 'npm-unknown'],
        pathNot: '(?:^|/)node_modules/vitest/',
      },
    },
    {
      name: 'not-to-dev-dep',
      comment: 'Shipped sources import an npm package listed in devDependencies only.',
      severity: 'error',
      from: PRODUCTION,
      to: {
        dependencyTypes: ['npm-dev'],
        // Type-only imports vanish from the emitted JavaScript.
        dependencyTypesNot: ['type-only'],
        pathNot: ['(?:^|/)node_modules/@types/'],
      },
    },
    {
      name: 'not-to-test-runner',
      comment: 'Shipped sources import the test runner.',
      severity: 'error',
      from: PRODUCTION,
      to: { path: '(?:^|/)node_modules/(?:vitest|@vitest/[^/]+)/' },
    },
    {
      name: 'not-to-test',
      comment: 'Shipped sources import a test or a test helper.',
      severity: 'error',
      from: PRODUCTION,
      to: { path: [...TEST_ONLY, '^packages/[^/]+/test/', '^tests/'] },
    },
    {
      name: 'not-to-spec',
      comment: 'Nothing imports a test file; share helpers from a testing/ module instead.',
      severity: 'error',
      from: {},
      to: { path: TEST_ONLY[0] },
    },
    {
      name: 'no-deprecated-core',
      comment: 'A deprecated Node core module.',
      severity: 'error',
      from: {},
      to: {
        dependencyTypes: ['core'],
        path: '^(?:punycode|domain|constants|sys|_linklist|_stream_wrap)$',
      },
    },
    {
      name: 'not-to-deprecated',
      comment: 'An npm package version that is marked deprecated.',
      severity: 'warn',
      from: {},
      to: { dependencyTypes: ['deprecated'] },
    },
    {
      name: 'no-duplicate-dep-types',
      comment: 'An npm package listed in both dependencies and devDependencies.',
      severity: 'error',
      from: {},
      to: { moreThanOneDependencyType: true, dependencyTypesNot: ['type-only'] },
    },
    ...workspaceManifestRules,
  ],
  options: {
    doNotFollow: { path: ['node_modules'] },
    // Built output (the bench and the cli's bin run it after `tsc -b`) is neither cruised nor
    // reported, so the result does not depend on whether a build ran. While dist/ is not built, an
    // import into it stays unresolved and reads as written (`../packages/api/dist/x.js` from bench/,
    // `../dist/main.js` from packages/cli/bin/), hence the relative forms.
    exclude: { path: ['^(?:[.][.]/)*packages/[^/]+/dist/', '^[.][.]/dist/'] },
    moduleSystems: ['es6', 'cjs'],
    // Type-only imports count: a type import couples packages as much as a value import does, and
    // with verbatimModuleSyntax they are written `import type` and would be invisible otherwise.
    tsPreCompilationDeps: true,
    enhancedResolveOptions: {
      exportsFields: ['exports'],
      // `@trellis/source` first: workspace packages resolve to their src/ TypeScript, as in
      // tsconfig's customConditions and vitest's resolve.conditions.
      conditionNames: ['@trellis/source', 'import', 'require', 'node', 'default', 'types'],
      mainFields: ['module', 'main', 'types', 'typings'],
    },
    skipAnalysisNotInRules: true,
  },
};
