/**
 * The API's wire schemas the CLI parses answers with, imported with `import()` where a command
 * calls the API: they are built with zod, which `trellis --help` and `--version` need not load.
 * Importing this module, not the @trellis/contract barrel, keeps the bundle's lazy chunk to
 * these schemas (scripts/lib/bundle-cli.mjs).
 */
export { ErrorBody, LogChunkSchema, RunDetailsSchema, WorkerSchema } from '@trellis/contract';
