/**
 * `loadConfig`, imported with `import()` by the commands that read the config: its schema is
 * built with zod, which `trellis --help` and `--version` need not load. Importing this module,
 * not the @trellis/core barrel, keeps the bundle's lazy chunk to the config loader
 * (scripts/lib/bundle-cli.mjs).
 */
export { loadConfig } from '@trellis/core';
